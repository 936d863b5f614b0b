//! Record signatures: a signed body verifies, and an edit, another key or a malformed line
//! does not.

use forgestate::format::{SigningKey, Verdict, canonical, sign, verify};

const BODY: &str =
    "[CHECKPOINT] w\nVersion: 2.0\nPhase: p\nSession: s\n\nState Data:\n```json\n{}\n```\n";

#[test]
fn signs_verifies_and_notices_edits_and_other_keys() {
    let key = SigningKey::new("k1").unwrap();
    let signed = sign(BODY, &key);
    assert!(signed.contains(&format!("Session: s\nSignature: hmac-sha256 {} ", key.id())));
    assert_eq!(
        verify(&signed, std::slice::from_ref(&key)),
        Verdict::Valid {
            key_id: key.id().into()
        }
    );
    assert_eq!(
        verify(&signed.replace("\n", "\r\n"), std::slice::from_ref(&key)).problem(),
        None
    );
    assert_eq!(canonical(&signed), canonical(BODY));
    let edited = signed.replace("Phase: p", "Phase: q");
    assert!(matches!(
        verify(&edited, std::slice::from_ref(&key)),
        Verdict::Wrong { .. }
    ));
    assert_eq!(verify(BODY, std::slice::from_ref(&key)), Verdict::Missing);
    let other = SigningKey::new("k2").unwrap();
    assert_ne!(other.id(), key.id());
    assert!(matches!(
        verify(&signed, std::slice::from_ref(&other)),
        Verdict::UnknownKey { .. }
    ));
    assert_eq!(
        verify(&signed, &[other, key.clone()]).problem(),
        None,
        "rotation"
    );
    let bad = signed.replace("hmac-sha256", "md5");
    assert_eq!(verify(&bad, std::slice::from_ref(&key)), Verdict::Malformed);
    assert_eq!(
        sign(&signed, &key),
        signed,
        "signing again replaces the line"
    );
    assert!(!format!("{key:?}").contains("k1"));
    assert!(SigningKey::new("  \n").is_none());
}
