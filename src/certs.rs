//! `syncguard certs`: a development CA and a serving certificate for the webhook.
//!
//! The files are named like the keys of a Kubernetes TLS Secret (`tls.crt`, `tls.key`, `ca.crt`)
//! so the same directory can be mounted into the pod, passed to `syncguard serve --cert-dir`, and
//! its `ca.crt` used as the webhook configuration's `caBundle`. `ca.key` is written next to them
//! so that running the command again rotates the serving certificate under the *same* CA —
//! clients (the API server, tests) keep trusting it — unless `--new-ca` is given. `ca.key` must
//! never go into the Secret the webhook mounts.
//!
//! Every file is written to a temporary name and renamed into place, so a server watching the
//! directory never reads half a file; keys are created with mode 0600.
//!
//! For production use cert-manager or your own PKI: these certificates are for development and
//! tests (ECDSA P-256, a CA valid for ten years, no revocation).

#![deny(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose,
};
use thiserror::Error;
use time::{Duration, OffsetDateTime};

/// The serving certificate (leaf only), as in a `kubernetes.io/tls` Secret.
pub const TLS_CRT: &str = "tls.crt";
/// The serving key (PKCS#8 PEM).
pub const TLS_KEY: &str = "tls.key";
/// The CA certificate: the webhook configuration's `caBundle`, and what clients trust.
pub const CA_CRT: &str = "ca.crt";
/// The CA key, kept for rotation; never mount it into the webhook.
pub const CA_KEY: &str = "ca.key";

/// How long the development CA is valid.
const CA_DAYS: i64 = 3650;

/// What to generate.
#[derive(Debug, Clone)]
pub struct CertsOptions {
    /// The output directory (created if missing).
    pub out: PathBuf,
    /// Names the serving certificate is valid for: DNS names (`syncguard.syncguard.svc`) or IP
    /// addresses (`127.0.0.1`).
    pub names: Vec<String>,
    /// Validity of the serving certificate in days.
    pub days: u32,
    /// Make a new CA even if `out` already has one.
    pub new_ca: bool,
}

/// What was written.
#[derive(Debug, Clone)]
pub struct Generated {
    /// True when an existing `ca.crt`/`ca.key` signed the new certificate.
    pub reused_ca: bool,
    /// The files written, in the order written.
    pub files: Vec<PathBuf>,
    /// The serving certificate's `notAfter`.
    pub not_after: OffsetDateTime,
}

/// Why certificates could not be generated.
#[derive(Debug, Error)]
pub enum CertsError {
    /// No name given: a certificate valid for nothing is useless.
    #[error("at least one --dns name is needed (e.g. syncguard.syncguard.svc or 127.0.0.1)")]
    NoNames,
    /// `--days 0`.
    #[error("--days must be at least 1")]
    NoDays,
    /// A name that is not a valid DNS name or IP address.
    #[error("invalid name `{name}`: {message}")]
    InvalidName {
        /// The rejected name.
        name: String,
        /// rcgen's explanation.
        message: String,
    },
    /// The existing CA could not be read or used.
    #[error("{}: cannot use the existing CA ({message}); pass --new-ca to replace it", path.display())]
    ExistingCa {
        /// `ca.crt` or `ca.key`.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Key or certificate generation failed.
    #[error("certificate generation failed: {0}")]
    Generate(String),
    /// A file could not be written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

fn generate_error(e: rcgen::Error) -> CertsError {
    CertsError::Generate(e.to_string())
}

/// Generates (or reuses) the CA and a new serving certificate in `options.out`.
pub fn generate(options: &CertsOptions) -> Result<Generated, CertsError> {
    if options.names.is_empty() {
        return Err(CertsError::NoNames);
    }
    if options.days == 0 {
        return Err(CertsError::NoDays);
    }
    if let Some(bad) = options.names.iter().find(|n| !is_valid_name(n)) {
        return Err(CertsError::InvalidName {
            name: bad.clone(),
            message: "expected a DNS name (letters, digits, `-`, `.`, an optional leading `*.`) \
                      or an IP address"
                .into(),
        });
    }
    let now = OffsetDateTime::now_utc();
    // A little slack for clocks that are behind (a VM, a kind node).
    let not_before = now - Duration::hours(1);
    let not_after = now + Duration::days(i64::from(options.days));

    let mut leaf =
        CertificateParams::new(options.names.clone()).map_err(|e| CertsError::InvalidName {
            name: options.names.join(", "),
            message: e.to_string(),
        })?;
    leaf.distinguished_name = DistinguishedName::new();
    leaf.distinguished_name.push(
        DnType::CommonName,
        options.names.first().cloned().unwrap_or_default(),
    );
    leaf.distinguished_name
        .push(DnType::OrganizationName, "syncguard development");
    leaf.not_before = not_before;
    leaf.not_after = not_after;
    leaf.use_authority_key_identifier_extension = true;
    leaf.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = KeyPair::generate().map_err(generate_error)?;

    fs::create_dir_all(&options.out).map_err(|e| CertsError::Io {
        path: options.out.clone(),
        source: e,
    })?;
    let ca_crt = options.out.join(CA_CRT);
    let ca_key = options.out.join(CA_KEY);
    let mut files = Vec::new();
    let reuse = !options.new_ca && ca_crt.is_file() && ca_key.is_file();
    let leaf_cert = if reuse {
        let issuer = existing_ca(&ca_crt, &ca_key)?;
        leaf.signed_by(&leaf_key, &issuer).map_err(generate_error)?
    } else {
        let mut ca = CertificateParams::default();
        ca.distinguished_name = DistinguishedName::new();
        ca.distinguished_name
            .push(DnType::CommonName, "syncguard development CA");
        ca.distinguished_name
            .push(DnType::OrganizationName, "syncguard development");
        ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
        ca.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        ca.not_before = not_before;
        ca.not_after = now + Duration::days(CA_DAYS);
        let key = KeyPair::generate().map_err(generate_error)?;
        let cert = ca.self_signed(&key).map_err(generate_error)?;
        write_atomically(&ca_key, key.serialize_pem().as_bytes(), true)?;
        write_atomically(&ca_crt, cert.pem().as_bytes(), false)?;
        files.push(ca_key.clone());
        files.push(ca_crt.clone());
        let issuer = Issuer::new(ca, key);
        leaf.signed_by(&leaf_key, &issuer).map_err(generate_error)?
    };
    // Key first: a watcher that sees the new certificate with the old key rejects the pair and
    // waits for the next event; the other order would be the same, but this keeps the window
    // where the pair mismatches as short as two renames.
    let tls_key = options.out.join(TLS_KEY);
    let tls_crt = options.out.join(TLS_CRT);
    write_atomically(&tls_key, leaf_key.serialize_pem().as_bytes(), true)?;
    write_atomically(&tls_crt, leaf_cert.pem().as_bytes(), false)?;
    files.push(tls_key);
    files.push(tls_crt);
    Ok(Generated {
        reused_ca: reuse,
        files,
        not_after,
    })
}

/// A DNS name (RFC 1123 labels, optionally a leading wildcard label) or an IP address.
fn is_valid_name(name: &str) -> bool {
    if name.parse::<std::net::IpAddr>().is_ok() {
        return true;
    }
    let name = name.strip_prefix("*.").unwrap_or(name);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

fn existing_ca(crt: &Path, key: &Path) -> Result<Issuer<'static, KeyPair>, CertsError> {
    let read = |path: &Path| {
        fs::read_to_string(path).map_err(|e| CertsError::ExistingCa {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
    };
    let key_pem = read(key)?;
    let crt_pem = read(crt)?;
    let key = KeyPair::from_pem(&key_pem).map_err(|e| CertsError::ExistingCa {
        path: key.to_path_buf(),
        message: e.to_string(),
    })?;
    Issuer::from_ca_cert_pem(&crt_pem, key).map_err(|e| CertsError::ExistingCa {
        path: crt.to_path_buf(),
        message: e.to_string(),
    })
}

/// Writes `bytes` to a temporary file next to `path` and renames it over `path`.
fn write_atomically(path: &Path, bytes: &[u8], private: bool) -> Result<(), CertsError> {
    let io = |source| CertsError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".syncguard-")
        .tempfile_in(dir)
        .map_err(io)?;
    // tempfile creates files with mode 0600; widen certificates to 0644.
    #[cfg(unix)]
    if !private {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o644)).map_err(io)?;
    }
    #[cfg(not(unix))]
    let _ = private;
    tmp.write_all(bytes).map_err(io)?;
    tmp.as_file().sync_all().map_err(io)?;
    tmp.persist(path).map_err(|e| io(e.error))?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn options(dir: &Path) -> CertsOptions {
        CertsOptions {
            out: dir.to_path_buf(),
            names: vec!["localhost".into(), "127.0.0.1".into()],
            days: 30,
            new_ca: false,
        }
    }

    fn der(path: &Path) -> Vec<u8> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        CertificateDer::from_pem_file(path).unwrap().to_vec()
    }

    #[test]
    fn files_are_named_like_a_kubernetes_tls_secret_and_keys_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let generated = generate(&options(dir.path())).unwrap();
        assert!(!generated.reused_ca);
        for f in [TLS_CRT, TLS_KEY, CA_CRT, CA_KEY] {
            assert!(dir.path().join(f).is_file(), "{f}");
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |f: &str| {
                fs::metadata(dir.path().join(f))
                    .unwrap()
                    .permissions()
                    .mode()
                    & 0o777
            };
            assert_eq!(mode(TLS_KEY), 0o600);
            assert_eq!(mode(CA_KEY), 0o600);
            assert_eq!(mode(TLS_CRT), 0o644);
        }
        let leaf_der = der(&dir.path().join(TLS_CRT));
        let ca_der = der(&dir.path().join(CA_CRT));
        let (_, cert) = x509_parser::parse_x509_certificate(&leaf_der).unwrap();
        let (_, ca) = x509_parser::parse_x509_certificate(&ca_der).unwrap();
        assert_eq!(cert.issuer(), ca.subject());
        let days = (cert.validity().not_after.timestamp()
            - OffsetDateTime::now_utc().unix_timestamp())
            / 86_400;
        assert!((29..=30).contains(&days), "{days}");
    }

    #[test]
    fn running_again_rotates_the_serving_certificate_under_the_same_ca() {
        let dir = tempfile::tempdir().unwrap();
        generate(&options(dir.path())).unwrap();
        let ca_before = der(&dir.path().join(CA_CRT));
        let leaf_before = der(&dir.path().join(TLS_CRT));
        let again = generate(&options(dir.path())).unwrap();
        assert!(again.reused_ca);
        assert_eq!(der(&dir.path().join(CA_CRT)), ca_before);
        assert_ne!(der(&dir.path().join(TLS_CRT)), leaf_before);
        let mut fresh = options(dir.path());
        fresh.new_ca = true;
        assert!(!generate(&fresh).unwrap().reused_ca);
        assert_ne!(der(&dir.path().join(CA_CRT)), ca_before);
    }

    #[test]
    fn names_and_days_are_required() {
        let dir = tempfile::tempdir().unwrap();
        let mut o = options(dir.path());
        o.names.clear();
        assert!(matches!(generate(&o), Err(CertsError::NoNames)));
        let mut o = options(dir.path());
        o.days = 0;
        assert!(matches!(generate(&o), Err(CertsError::NoDays)));
        let mut o = options(dir.path());
        o.names = vec!["not a name!".into()];
        assert!(matches!(generate(&o), Err(CertsError::InvalidName { .. })));
    }
}
