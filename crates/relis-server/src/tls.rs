//! TLS with rustls: builds the server's TLS configuration from Redis's `tls-*` settings.
//!
//! Honoured: `tls-cert-file`, `tls-key-file`, `tls-ca-cert-file`, `tls-ca-cert-dir`,
//! `tls-auth-clients` (yes / optional / no), `tls-protocols` (TLSv1.2 and TLSv1.3; rustls has
//! no older versions) and `tls-ciphersuites` (TLS 1.3 suite names as OpenSSL spells them).
//! Accepted and reported only: `tls-ciphers` (OpenSSL's TLS 1.2 cipher-list language) and the
//! OpenSSL tuning knobs. An encrypted PKCS#8 private key is decrypted with `tls-key-file-pass`;
//! OpenSSL 1.x's traditional encrypted PEM is refused with how to convert it.
//!
//! Messages name the file and the problem, in Redis's words where Redis has them
//! (`Failed to load certificate: <file>: ...`).

use crate::config::{Config, TlsAuthClients};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig, SupportedProtocolVersion};
use std::path::Path;
use std::sync::Arc;

pub use tokio_rustls::TlsAcceptor;

/// Whether a CONFIG SET of `name` changes the TLS configuration (which is then rebuilt).
pub fn is_tls_setting(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "tls-cert-file"
            | "tls-key-file"
            | "tls-key-file-pass"
            | "tls-ca-cert-file"
            | "tls-ca-cert-dir"
            | "tls-auth-clients"
            | "tls-protocols"
            | "tls-ciphers"
            | "tls-ciphersuites"
    )
}

/// Builds the acceptor for TLS connections from `config`'s `tls-*` settings.
///
/// # Errors
/// A missing or unreadable certificate, key or CA file (the message names it), a key that does
/// not match the certificate, no CA while client certificates are required, or an invalid
/// `tls-protocols` / `tls-ciphersuites`.
pub fn acceptor(config: &Config) -> Result<TlsAcceptor, String> {
    let mut provider = rustls::crypto::ring::default_provider();
    if !config.tls_ciphersuites.is_empty() {
        provider.cipher_suites = ciphersuites(&provider, &config.tls_ciphersuites)?;
    }
    let provider = Arc::new(provider);
    let versions = protocols(&config.tls_protocols)?;
    if config.tls_cert_file.is_empty() {
        return Err("tls-cert-file must be set when TLS is enabled".into());
    }
    if config.tls_key_file.is_empty() {
        return Err("tls-key-file must be set when TLS is enabled".into());
    }
    let certs = load_certs(Path::new(&config.tls_cert_file))
        .map_err(|e| format!("Failed to load certificate: {}: {e}", config.tls_cert_file))?;
    let key = load_key(config)
        .map_err(|e| format!("Failed to load private key: {}: {e}", config.tls_key_file))?;
    let roots = load_roots(config)?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("Failed to configure TLS: {e}"))?;
    let builder = match (config.tls_auth_clients, roots) {
        (TlsAuthClients::No, _) => builder.with_no_client_auth(),
        (_, None) => {
            return Err("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!".into())
        }
        (auth, Some(roots)) => {
            let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider);
            let verifier = if auth == TlsAuthClients::Optional {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            let verifier = verifier
                .build()
                .map_err(|e| format!("Failed to configure CA certificate(s): {e}"))?;
            builder.with_client_cert_verifier(verifier)
        }
    };
    let server = builder.with_single_cert(certs, key).map_err(|e| match e {
        rustls::Error::InconsistentKeys(_) => format!(
            "Failed to load private key: {}: it is not the key of the certificate in {}",
            config.tls_key_file, config.tls_cert_file
        ),
        // webpki refuses X.509 v1 certificates (`openssl x509 -req` without extensions
        // makes them); OpenSSL takes them.
        e if format!("{e:?}").contains("UnsupportedCertVersion") => format!(
            "Failed to load certificate: {}: an X.509 v1 certificate; rustls needs v3 (give openssl x509 -req an -extfile, e.g. with subjectAltName)",
            config.tls_cert_file
        ),
        e => format!("Failed to load certificate: {}: {e}", config.tls_cert_file),
    })?;
    Ok(TlsAcceptor::from(Arc::new(server)))
}

/// `tls-protocols`: Redis's words, any case; empty means TLSv1.2 and TLSv1.3 (Redis's default).
fn protocols(spec: &str) -> Result<Vec<&'static SupportedProtocolVersion>, String> {
    if spec.trim().is_empty() {
        return Ok(vec![&rustls::version::TLS13, &rustls::version::TLS12]);
    }
    let mut out = Vec::new();
    for word in spec.split_whitespace() {
        match word.to_ascii_lowercase().as_str() {
            "tlsv1.3" => out.push(&rustls::version::TLS13),
            "tlsv1.2" => out.push(&rustls::version::TLS12),
            // Known to Redis, too weak for rustls: skipped, so "TLSv1.1 TLSv1.2" still works.
            "tlsv1" | "tlsv1.1" => {}
            _ => return Err("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.".into()),
        }
    }
    if out.is_empty() {
        return Err(format!(
            "tls-protocols '{spec}': Relis supports only TLSv1.2 and TLSv1.3"
        ));
    }
    Ok(out)
}

/// `tls-ciphersuites`: TLS 1.3 suites as OpenSSL names them (`TLS_AES_256_GCM_SHA384`),
/// `:` separated; TLS 1.2 suites are kept (they are `tls-ciphers`' business).
fn ciphersuites(
    provider: &rustls::crypto::CryptoProvider,
    spec: &str,
) -> Result<Vec<rustls::SupportedCipherSuite>, String> {
    let mut out: Vec<rustls::SupportedCipherSuite> = Vec::new();
    for name in spec.split(':').filter(|n| !n.is_empty()) {
        // rustls says TLS13_AES_256_GCM_SHA384 where OpenSSL says TLS_AES_256_GCM_SHA384.
        let want = name.to_ascii_uppercase().replacen("TLS_", "TLS13_", 1);
        let suite = provider
            .cipher_suites
            .iter()
            .find(|s| s.tls13().is_some() && s.suite().as_str() == Some(want.as_str()))
            .ok_or_else(|| format!("Failed to configure ciphersuites: {spec}"))?;
        out.push(*suite);
    }
    if out.is_empty() {
        return Err(format!("Failed to configure ciphersuites: {spec}"));
    }
    out.extend(
        provider
            .cipher_suites
            .iter()
            .filter(|s| s.tls13().is_none())
            .copied(),
    );
    Ok(out)
}

fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem_error)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error)?;
    if certs.is_empty() {
        return Err("no PEM certificate in the file".into());
    }
    Ok(certs)
}

fn load_key(config: &Config) -> Result<PrivateKeyDer<'static>, String> {
    let path = Path::new(&config.tls_key_file);
    let text = std::fs::read(path).map_err(|e| e.to_string())?;
    if text
        .windows(b"-----BEGIN ENCRYPTED PRIVATE KEY-----".len())
        .any(|w| w == b"-----BEGIN ENCRYPTED PRIVATE KEY-----")
    {
        return decrypt_key(&text, &config.tls_key_file_pass);
    }
    if text
        .windows(b"Proc-Type: 4,ENCRYPTED".len())
        .any(|w| w == b"Proc-Type: 4,ENCRYPTED")
    {
        // OpenSSL 1.x's "traditional" encryption (DEK-Info): not supported, say how to convert.
        return Err("a key encrypted in OpenSSL's traditional format; convert it to PKCS#8 (openssl pkcs8 -topk8 -in <key> -out <new key>)".into());
    }
    PrivateKeyDer::from_pem_slice(&text).map_err(pem_error)
}

/// An encrypted PKCS#8 key (`-----BEGIN ENCRYPTED PRIVATE KEY-----`, what OpenSSL 3 writes
/// with a passphrase), decrypted with `tls-key-file-pass`.
fn decrypt_key(text: &[u8], pass: &str) -> Result<PrivateKeyDer<'static>, String> {
    if pass.is_empty() {
        return Err("the key is encrypted and tls-key-file-pass is not set".into());
    }
    let text = std::str::from_utf8(text).map_err(|_| "not a PEM file".to_string())?;
    let (_, doc) = pkcs8::SecretDocument::from_pem(text).map_err(|e| e.to_string())?;
    let info =
        pkcs8::EncryptedPrivateKeyInfo::try_from(doc.as_bytes()).map_err(|e| e.to_string())?;
    let plain = info
        .decrypt(pass)
        .map_err(|e| format!("cannot decrypt it with tls-key-file-pass: {e}"))?;
    Ok(PrivateKeyDer::Pkcs8(plain.as_bytes().to_vec().into()))
}

/// The CA certificates client certificates must chain to: `None` when neither
/// `tls-ca-cert-file` nor `tls-ca-cert-dir` is set.
fn load_roots(config: &Config) -> Result<Option<RootCertStore>, String> {
    let failed = |what: &str, e: String| {
        format!("Failed to configure CA certificate(s) file/directory: {what}: {e}")
    };
    let mut certs = Vec::new();
    if !config.tls_ca_cert_file.is_empty() {
        certs.extend(
            load_certs(Path::new(&config.tls_ca_cert_file))
                .map_err(|e| failed(&config.tls_ca_cert_file, e))?,
        );
    }
    if !config.tls_ca_cert_dir.is_empty() {
        let dir = &config.tls_ca_cert_dir;
        let entries = std::fs::read_dir(dir).map_err(|e| failed(dir, e.to_string()))?;
        let before = certs.len();
        // OpenSSL looks certificates up by hashed name (c_rehash); every readable PEM file
        // in the directory is a superset of that, and files that are not PEM are skipped.
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_file() {
                if let Ok(found) = load_certs(&path) {
                    certs.extend(found);
                }
            }
        }
        if certs.len() == before {
            return Err(failed(dir, "no PEM certificate in the directory".into()));
        }
    }
    if config.tls_ca_cert_file.is_empty() && config.tls_ca_cert_dir.is_empty() {
        return Ok(None);
    }
    let mut roots = RootCertStore::empty();
    for cert in certs {
        roots.add(cert).map_err(|e| {
            let what = if config.tls_ca_cert_file.is_empty() {
                &config.tls_ca_cert_dir
            } else {
                &config.tls_ca_cert_file
            };
            failed(what, e.to_string())
        })?;
    }
    Ok(Some(roots))
}

fn pem_error(e: rustls::pki_types::pem::Error) -> String {
    match e {
        rustls::pki_types::pem::Error::Io(e) => e.to_string(),
        rustls::pki_types::pem::Error::NoItemsFound => "no PEM private key in the file".into(),
        e => format!("{e:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn protocols_as_redis_spells_them() {
        assert_eq!(protocols("").unwrap().len(), 2);
        assert_eq!(protocols("TLSv1.2").unwrap().len(), 1);
        assert_eq!(protocols("tlsv1.1 TLSV1.3").unwrap().len(), 1);
        assert_eq!(
            protocols("TLSv9").unwrap_err(),
            "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."
        );
        assert!(protocols("TLSv1 TLSv1.1")
            .unwrap_err()
            .contains("only TLSv1.2"));
    }

    #[test]
    fn ciphersuites_by_openssl_name() {
        let p = rustls::crypto::ring::default_provider();
        let all = p.cipher_suites.len();
        let tls12 = p
            .cipher_suites
            .iter()
            .filter(|s| s.tls13().is_none())
            .count();
        let got = ciphersuites(&p, "TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256").unwrap();
        assert_eq!(got.len(), tls12 + 2);
        assert!(got.len() < all);
        assert_eq!(
            ciphersuites(&p, "bogus").unwrap_err(),
            "Failed to configure ciphersuites: bogus"
        );
    }

    #[test]
    fn missing_files_are_named() {
        let mut c = Config {
            tls_cert_file: "/nonexistent/server.crt".into(),
            tls_key_file: "/nonexistent/server.key".into(),
            ..Config::default()
        };
        let e = acceptor(&c).err().unwrap();
        assert!(
            e.starts_with("Failed to load certificate: /nonexistent/server.crt: "),
            "{e}"
        );
        c.tls_protocols = "TLSv1.4".into();
        assert!(acceptor(&c)
            .err()
            .unwrap()
            .starts_with("Invalid tls-protocols"));
    }
}
