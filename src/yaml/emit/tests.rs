use super::analyze::analyze_all;
use super::*;

/// The shortcut for names and numbers agrees with the full analysis on
/// every text it takes (all strings of up to three bytes from an alphabet
/// with each byte class the analysis tells apart, plus longer names).
#[test]
fn analysis_shortcut_matches_the_full_analysis() {
    let alphabet = b"aZ09-_./ :#,?[{!&*|>'\"%@`\t\n~";
    let mut texts: Vec<String> = vec![
        "cm-00001".into(),
        "big-app-0001".into(),
        "nginx".into(),
        "1.25".into(),
        "apps/v1".into(),
        "a..b".into(),
        "x---".into(),
    ];
    for &a in alphabet {
        for &b in alphabet {
            for &c in alphabet {
                texts.push(String::from_utf8(vec![a]).unwrap());
                texts.push(String::from_utf8(vec![a, b]).unwrap());
                texts.push(String::from_utf8(vec![a, b, c]).unwrap());
            }
        }
    }
    for t in &texts {
        assert_eq!(analyze(t), analyze_all(t), "{t:?}");
    }
}

#[test]
fn duplicate_keys_print_the_last_value_in_key_order() {
    let node = crate::yaml::parse_one("b: 1\na: 2\nb: 3\nc: {z: 1, y: 2}\n", Resolver::V3).unwrap();
    assert_eq!(
        to_string(&node).unwrap(),
        "a: 2\nb: 3\nc:\n  \"y\": 2\n  z: 1\n"
    );
}
