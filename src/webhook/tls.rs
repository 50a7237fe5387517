//! The serving certificate: read `tls.crt`/`tls.key` from a directory (a mounted
//! `kubernetes.io/tls` Secret), build a rustls configuration (TLS 1.3 and 1.2 only, ring), and
//! describe what was loaded.
//!
//! A pair is accepted only when both files parse and the key matches the certificate; anything
//! else is an error and the caller keeps serving the last good pair. The certificate is not
//! checked for validity dates: an expired certificate is still better served (and alerted on via
//! `syncguard_certificate_expiry_timestamp_seconds`) than no TLS at all.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use thiserror::Error;

use crate::certs::{TLS_CRT, TLS_KEY};

/// Why a certificate pair cannot be used.
#[derive(Debug, Error)]
pub enum TlsError {
    /// `tls.crt` or `tls.key` is missing.
    #[error("{}: missing (expected {TLS_CRT} and {TLS_KEY}, as in a kubernetes.io/tls Secret)", path.display())]
    Missing {
        /// The missing file.
        path: PathBuf,
    },
    /// A file could not be read.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not PEM of the expected type.
    #[error("{}: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// The key does not belong to the certificate, or rustls rejects the pair.
    #[error("{}: {message}", dir.display())]
    Rejected {
        /// The directory.
        dir: PathBuf,
        /// rustls's reason.
        message: String,
        /// True when the key does not match the certificate.
        key_mismatch: bool,
    },
}

impl TlsError {
    /// A short label for `syncguard_reload_failures_total{reason}`.
    pub fn metric_label(&self) -> &'static str {
        match self {
            TlsError::Missing { .. } => "missing",
            TlsError::Io { .. } => "io",
            TlsError::Parse { .. } => "parse",
            TlsError::Rejected {
                key_mismatch: true, ..
            } => "key_mismatch",
            TlsError::Rejected { .. } => "rejected",
        }
    }
}

/// What is known about a loaded serving certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertInfo {
    /// The leaf certificate's serial number, hex.
    pub serial: String,
    /// `notAfter`, Unix seconds.
    pub not_after: i64,
    /// The leaf certificate, DER (tests compare it with what the server presents).
    pub leaf_der: Vec<u8>,
}

/// The raw bytes of a pair, read once, so that what is fingerprinted is exactly what is loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PairBytes {
    /// `tls.crt`.
    pub cert: Vec<u8>,
    /// `tls.key`.
    pub key: Vec<u8>,
}

/// Reads `tls.crt` and `tls.key` from `dir` (following the symlinks of a mounted Secret).
pub fn read_pair(dir: &Path) -> Result<PairBytes, TlsError> {
    let read = |name: &str| {
        let path = dir.join(name);
        std::fs::read(&path).map_err(|source| {
            if source.kind() == std::io::ErrorKind::NotFound {
                TlsError::Missing { path }
            } else {
                TlsError::Io { path, source }
            }
        })
    };
    Ok(PairBytes {
        cert: read(TLS_CRT)?,
        key: read(TLS_KEY)?,
    })
}

/// Builds the rustls server configuration for a pair read from `dir`.
pub fn server_config(
    dir: &Path,
    pair: &PairBytes,
) -> Result<(Arc<ServerConfig>, CertInfo), TlsError> {
    let cert_path = dir.join(TLS_CRT);
    let key_path = dir.join(TLS_KEY);
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&pair.cert)
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::Parse {
            path: cert_path.clone(),
            message: format!("not a PEM certificate chain: {e}"),
        })?;
    let Some(leaf) = chain.first().cloned() else {
        return Err(TlsError::Parse {
            path: cert_path,
            message: "no CERTIFICATE block".into(),
        });
    };
    let key = PrivateKeyDer::from_pem_slice(&pair.key).map_err(|e| TlsError::Parse {
        path: key_path,
        message: format!("not a PEM private key: {e}"),
    })?;
    let (_, parsed) = x509_parser::parse_x509_certificate(&leaf).map_err(|e| TlsError::Parse {
        path: cert_path,
        message: format!("not an X.509 certificate: {e}"),
    })?;
    let info = CertInfo {
        serial: parsed.raw_serial_as_string(),
        not_after: parsed.validity().not_after.timestamp(),
        leaf_der: leaf.to_vec(),
    };
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let rejected = |e: rustls::Error| TlsError::Rejected {
        dir: dir.to_path_buf(),
        key_mismatch: matches!(e, rustls::Error::InconsistentKeys(_)),
        message: e.to_string(),
    };
    // TLS 1.3 first: rustls picks the best version both sides support, so 1.3 is preferred and
    // 1.2 stays for older clients; nothing older is offered.
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(rejected)?
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .map_err(rejected)?;
    // The API server speaks HTTP/2 when offered; HTTP/1.1 for curl and simple clients.
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((Arc::new(config), info))
}

/// A configuration with no certificate: every handshake fails (the client sees a TLS alert)
/// until the reloader swaps in a real pair. Lets the server start, bind and answer its probes
/// (readiness 503 "no serving certificate") while the Secret is still being issued, e.g. by
/// cert-manager right after install, instead of crash-looping.
pub fn placeholder_config() -> Result<Arc<ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| TlsError::Rejected {
            dir: PathBuf::new(),
            key_mismatch: false,
            message: e.to_string(),
        })?
        .with_no_client_auth()
        .with_cert_resolver(Arc::new(NoCertificate));
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Resolves no certificate: see [`placeholder_config`].
#[derive(Debug)]
struct NoCertificate;

impl rustls::server::ResolvesServerCert for NoCertificate {
    fn resolve(
        &self,
        _hello: rustls::server::ClientHello<'_>,
    ) -> Option<Arc<rustls::sign::CertifiedKey>> {
        None
    }
}

/// Reads and builds in one step.
pub fn load(dir: &Path) -> Result<(Arc<ServerConfig>, CertInfo, PairBytes), TlsError> {
    let pair = read_pair(dir)?;
    let (config, info) = server_config(dir, &pair)?;
    Ok((config, info, pair))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::certs::{CertsOptions, generate};

    fn certs(dir: &Path) {
        generate(&CertsOptions {
            out: dir.to_path_buf(),
            names: vec!["localhost".into()],
            days: 2,
            new_ca: false,
        })
        .unwrap();
    }

    #[test]
    fn a_generated_pair_loads_and_reports_its_expiry() {
        let dir = tempfile::tempdir().unwrap();
        certs(dir.path());
        let (config, info, _) = load(dir.path()).unwrap();
        assert_eq!(config.alpn_protocols.len(), 2);
        let now = time::OffsetDateTime::now_utc().unix_timestamp();
        assert!((info.not_after - now - 2 * 86_400).abs() < 120);
        assert!(!info.serial.is_empty());
    }

    #[test]
    fn a_key_from_another_pair_is_rejected() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        certs(a.path());
        certs(b.path());
        std::fs::copy(b.path().join(TLS_KEY), a.path().join(TLS_KEY)).unwrap();
        let err = load(a.path()).unwrap_err();
        assert_eq!(err.metric_label(), "key_mismatch", "{err}");
    }

    #[test]
    fn missing_and_garbage_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path()).unwrap_err().metric_label(), "missing");
        certs(dir.path());
        std::fs::write(dir.path().join(TLS_CRT), "garbage").unwrap();
        assert_eq!(load(dir.path()).unwrap_err().metric_label(), "parse");
    }
}
