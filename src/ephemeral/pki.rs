//! The throwaway control plane's certificates: a CA, the API server's serving certificate for
//! 127.0.0.1, an admin client certificate (group `system:masters`) and the service-account
//! signing key. ECDSA P-256 keys from rcgen: generating them takes milliseconds, where RSA
//! keys from openssl take most of a second each on a slow machine.

use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use time::{Duration, OffsetDateTime};

/// The files written, and the PEM the client needs.
#[derive(Debug)]
pub struct Pki {
    /// The CA certificate (PEM), trusted by the client and by the API server for clients.
    pub ca_pem: String,
    /// The admin client certificate (PEM).
    pub client_cert_pem: String,
    /// The admin client key (PEM).
    pub client_key_pem: String,
    /// `ca.crt`.
    pub ca_file: PathBuf,
    /// `apiserver.crt`.
    pub serving_cert_file: PathBuf,
    /// `apiserver.key`.
    pub serving_key_file: PathBuf,
    /// `sa.key`: signs service-account tokens.
    pub service_account_key_file: PathBuf,
    /// `sa.pub`: verifies them.
    pub service_account_public_file: PathBuf,
}

/// Writes everything under `dir` (private keys readable by the owner only).
pub fn generate(dir: &Path) -> Result<Pki, String> {
    fn e(what: &'static str) -> impl Fn(rcgen::Error) -> String {
        move |err| format!("{what}: {err}")
    }
    let now = OffsetDateTime::now_utc();
    let mut ca = CertificateParams::default();
    ca.distinguished_name = DistinguishedName::new();
    ca.distinguished_name
        .push(DnType::CommonName, "syncguard ephemeral control plane CA");
    ca.is_ca = IsCa::Ca(BasicConstraints::Constrained(0));
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    ca.not_before = now - Duration::hours(1);
    ca.not_after = now + Duration::days(1);
    let ca_key = KeyPair::generate().map_err(e("CA key"))?;
    let ca_cert = ca.self_signed(&ca_key).map_err(e("CA certificate"))?;
    let ca_pem = ca_cert.pem();
    let issuer = Issuer::new(ca.clone(), ca_key);

    let mut serving =
        CertificateParams::new(vec!["localhost".to_string()]).map_err(e("serving names"))?;
    serving
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    serving.distinguished_name = DistinguishedName::new();
    serving
        .distinguished_name
        .push(DnType::CommonName, "kube-apiserver");
    serving.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    serving.not_before = ca.not_before;
    serving.not_after = ca.not_after;
    let serving_key = KeyPair::generate().map_err(e("serving key"))?;
    let serving_cert = serving
        .signed_by(&serving_key, &issuer)
        .map_err(e("serving certificate"))?;

    let mut client = CertificateParams::default();
    client.distinguished_name = DistinguishedName::new();
    client
        .distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    client
        .distinguished_name
        .push(DnType::CommonName, "syncguard-check");
    client.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    client.not_before = ca.not_before;
    client.not_after = ca.not_after;
    let client_key = KeyPair::generate().map_err(e("client key"))?;
    let client_cert = client
        .signed_by(&client_key, &issuer)
        .map_err(e("client certificate"))?;

    let sa_key = KeyPair::generate().map_err(e("service-account key"))?;

    let pki = Pki {
        ca_pem: ca_pem.clone(),
        client_cert_pem: client_cert.pem(),
        client_key_pem: client_key.serialize_pem(),
        ca_file: dir.join("ca.crt"),
        serving_cert_file: dir.join("apiserver.crt"),
        serving_key_file: dir.join("apiserver.key"),
        service_account_key_file: dir.join("sa.key"),
        service_account_public_file: dir.join("sa.pub"),
    };
    write(&pki.ca_file, &ca_pem, false)?;
    write(&pki.serving_cert_file, &serving_cert.pem(), false)?;
    write(&pki.serving_key_file, &serving_key.serialize_pem(), true)?;
    write(&pki.service_account_key_file, &sa_key.serialize_pem(), true)?;
    write(
        &pki.service_account_public_file,
        &sa_key.public_key_pem(),
        false,
    )?;
    Ok(pki)
}

fn write(path: &Path, text: &str, private: bool) -> Result<(), String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    use std::io::Write as _;
    options
        .open(path)
        .and_then(|mut f| f.write_all(text.as_bytes()))
        .map_err(|err| format!("{}: {err}", path.display()))
}
