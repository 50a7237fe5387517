//! `syncguard certs`: write a development CA and serving certificate.

use std::io::Write;

use crate::certs::{CA_CRT, CertsOptions, generate};
use crate::cli::CertsArgs;

use super::Outcome;

/// Generates the files and says what was written and how to use them.
pub fn run(args: &CertsArgs, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let generated = generate(&CertsOptions {
        out: args.out.clone(),
        names: args.dns.clone(),
        days: args.days,
        new_ca: args.new_ca,
    })?;
    for f in &generated.files {
        writeln!(out, "wrote {}", f.display())?;
    }
    if generated.reused_ca {
        writeln!(
            out,
            "signed by the existing CA in {} (pass --new-ca to replace it)",
            args.out.display()
        )?;
    }
    writeln!(
        out,
        "serving certificate for {} valid until {}",
        args.dns.join(", "),
        generated.not_after.date()
    )?;
    writeln!(
        out,
        "trust {} (the webhook's caBundle); never mount ca.key into the webhook",
        args.out.join(CA_CRT).display()
    )?;
    Ok(Outcome::Clean)
}
