//! The set-image argument against kustomize's setimage_test.go cases, the
//! malformed references the grammar refuses, and property tests: any text
//! parses or is refused without a panic, every valid spec parses back from
//! its argument, and the reference checks agree with distribution's
//! regular expressions (regexp.go, written out here as the oracle).

use proptest::prelude::*;

use super::super::image_ref::{check_digest, check_name, check_tag, RefError};
use super::*;

const D: &str = "sha256:24a0c4b4a4c0eb97a1aabb8e29f18e917d05abfe1b7a7c07857230879ce7d3d3";

fn set(v: &str) -> Field {
    Field::Set(v.to_string())
}

/// An argument and its NAME, NEWNAME, TAG, DIGEST.
type Case = (&'static str, (&'static str, Field, Field, Field));

fn parsed(text: &str) -> (String, Field, Field, Field) {
    let s = ImageSpec::parse(text).unwrap_or_else(|e| panic!("{e}"));
    (s.name, s.new_name, s.tag, s.digest)
}

#[test]
fn kustomize_setimage_forms() {
    use Field::{Keep, Remove};
    let cases: Vec<Case> = vec![
        (
            "image1=my-image1:my-tag",
            ("image1", set("my-image1"), set("my-tag"), Remove),
        ),
        (
            "image1=my-image1:1234",
            ("image1", set("my-image1"), set("1234"), Remove),
        ),
        (
            "image1=my-image1@D",
            ("image1", set("my-image1"), Remove, set(D)),
        ),
        ("image1:my-tag", ("image1", Remove, set("my-tag"), Remove)),
        ("image1@D", ("image1", Remove, Remove, set(D))),
        (
            "my-image1:my-tag@D",
            ("my-image1", Remove, set("my-tag"), set(D)),
        ),
        (
            "image1=my-image1:my-tag@D",
            ("image1", set("my-image1"), set("my-tag"), set(D)),
        ),
        (
            "ngnix=localhost:5000/my-project/ngnix",
            (
                "ngnix",
                set("localhost:5000/my-project/ngnix"),
                Remove,
                Remove,
            ),
        ),
        (
            "ngnix=localhost:5000/my-project/ngnix:dev-01",
            (
                "ngnix",
                set("localhost:5000/my-project/ngnix"),
                set("dev-01"),
                Remove,
            ),
        ),
        ("image1=*:v1", ("image1", Keep, set("v1"), Remove)),
        (
            "image1=my-image1:*",
            ("image1", set("my-image1"), Keep, Remove),
        ),
        ("image1=*:*", ("image1", Keep, Keep, Remove)),
        ("image2=*@D", ("image2", Keep, Remove, set(D))),
        (
            "image2=my-image2@*",
            ("image2", set("my-image2"), Remove, Keep),
        ),
        ("image1=*", ("image1", Keep, Remove, Remove)),
        ("image1:*@*", ("image1", Remove, Keep, Keep)),
        ("mysql=mariadb", ("mysql", set("mariadb"), Remove, Remove)),
        (
            "[::1]:5000/web:1",
            ("[::1]:5000/web", Remove, set("1"), Remove),
        ),
    ];
    for (text, (name, new_name, tag, digest)) in cases {
        let text = text.replace("@D", &format!("@{D}"));
        assert_eq!(
            parsed(&text),
            (name.to_string(), new_name, tag, digest),
            "{text}"
        );
    }
}

fn problem(text: &str) -> Problem {
    match ImageSpec::parse(text) {
        Ok(s) => panic!("{text:?} parsed: {s:?}"),
        Err(e) => {
            assert_eq!(e.text, text);
            e.problem
        }
    }
}

fn reference(part: Part, error: RefError) -> Problem {
    Problem::Reference { part, error }
}

#[test]
fn malformed_arguments_are_refused_with_the_reason() {
    let web = "ghcr.io/acme-shop/web";
    assert_eq!(problem("bad"), Problem::NothingToSet);
    assert_eq!(problem("=web:1"), Problem::Empty(Part::Name));
    assert_eq!(problem("web="), Problem::Empty(Part::NewName));
    assert_eq!(problem("web:"), Problem::Empty(Part::Tag));
    assert_eq!(problem("web=x@"), Problem::Empty(Part::Digest));
    assert_eq!(problem("*:1"), Problem::StarName);
    assert_eq!(
        problem("a:b:c"),
        reference(
            Part::Tag,
            RefError::Character {
                what: "tag",
                text: "b:c".into(),
                ch: ':'
            }
        )
    );
    assert_eq!(
        problem(&format!("{web}:1.0\n")),
        reference(
            Part::Tag,
            RefError::Character {
                what: "tag",
                text: "1.0\n".into(),
                ch: '\n'
            }
        )
    );
    assert_eq!(
        problem(&format!("{web}:1.0 # x")),
        reference(
            Part::Tag,
            RefError::Character {
                what: "tag",
                text: "1.0 # x".into(),
                ch: ' '
            }
        )
    );
    assert_eq!(
        problem("Web:1"),
        reference(Part::Name, RefError::Uppercase("Web".into()))
    );
    assert_eq!(
        problem("web=ghcr.io/acme//web:1"),
        reference(
            Part::NewName,
            RefError::EmptyComponent("ghcr.io/acme//web".into())
        )
    );
    assert_eq!(
        problem("web=-web:1"),
        reference(
            Part::NewName,
            RefError::Component {
                name: "-web".into(),
                component: "-web".into()
            }
        )
    );
    assert_eq!(
        problem("web=my_.image:1"),
        reference(
            Part::NewName,
            RefError::Component {
                name: "my_.image".into(),
                component: "my_.image".into()
            }
        )
    );
    assert_eq!(
        problem("web=reg-.io/web:1"),
        reference(
            Part::NewName,
            RefError::Domain {
                name: "reg-.io/web".into(),
                domain: "reg-.io".into()
            }
        )
    );
    assert_eq!(
        problem("web:.1"),
        reference(Part::Tag, RefError::Tag(".1".into()))
    );
    let long = "a".repeat(129);
    assert_eq!(
        problem(&format!("web:{long}")),
        reference(Part::Tag, RefError::Tag(long))
    );
    let long = format!("ghcr.io/acme/{}", "a".repeat(251));
    assert_eq!(
        problem(&format!("{long}:1")),
        reference(Part::Name, RefError::NameTooLong(long))
    );
    assert_eq!(
        problem("web@sha256:abc"),
        reference(Part::Digest, RefError::DigestFormat("sha256:abc".into()))
    );
    let upper = format!("sha256:{}", "A".repeat(64));
    assert_eq!(
        problem(&format!("web@{upper}")),
        reference(
            Part::Digest,
            RefError::DigestHex {
                text: upper,
                algorithm: "sha256".into(),
                want: 64
            }
        )
    );
    let md5 = format!("md5:{}", "0".repeat(32));
    assert_eq!(
        problem(&format!("web@{md5}")),
        reference(Part::Digest, RefError::DigestAlgorithm(md5))
    );
    let short = format!("sha256:{}", "0".repeat(40));
    assert_eq!(
        problem(&format!("web@{short}")),
        reference(
            Part::Digest,
            RefError::DigestHex {
                text: short,
                algorithm: "sha256".into(),
                want: 64
            }
        )
    );
}

#[test]
fn the_message_names_the_argument_and_the_reason() {
    let e = ImageSpec::parse("ghcr.io/acme-shop/web:1.0\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "image `ghcr.io/acme-shop/web:1.0\\n`: TAG: tag `1.0\\n` contains a line break"
    );
}

// distribution/reference regexp.go, as a regular expression, the oracle of
// the hand-written checks.
const DOMAIN_COMPONENT: &str = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const PATH_COMPONENT: &str = r"[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*";

fn domain() -> String {
    format!(r"(?:{DOMAIN_COMPONENT}(?:\.{DOMAIN_COMPONENT})*|\[(?:[a-fA-F0-9:]+)\])(?::[0-9]+)?")
}

fn remote() -> String {
    format!("{PATH_COMPONENT}(?:/{PATH_COMPONENT})*")
}

fn regex(pattern: &str) -> regex::Regex {
    regex::Regex::new(pattern).unwrap_or_else(|e| panic!("{e}"))
}

/// Whether distribution's anchoredNameRegexp matches, and the length of
/// the path it captures (the domain is captured when it can be).
fn distribution_name(name: &str) -> Option<usize> {
    let (domain, remote) = (domain(), remote());
    let re = regex(&format!("^(?:({domain})/)?({remote})$"));
    let caps = re.captures(name)?;
    caps.get(2).map(|p| p.as_str().len())
}

fn names() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9._/-]{1,24}",
        "[a-zA-Z0-9.:_\\[\\]/-]{1,24}",
        "(localhost|[a-z0-9-]{1,8}(\\.[a-z0-9-]{1,6}){0,2}|\\[[0-9a-f:]{2,8}\\])(:[0-9]{1,5})?/[a-z0-9]{1,4}([._-]{1,2}[a-z0-9]{1,4}){0,2}(/[a-z0-9]{1,6}){0,2}",
    ]
}

fn valid_spec() -> impl Strategy<Value = ImageSpec> {
    let name = "[a-z0-9]{1,6}([._-][a-z0-9]{1,4})?(/[a-z0-9]{1,6}){0,2}";
    let domain = "([a-z]([a-z0-9-]{0,5}[a-z0-9])?\\.[a-z]{2,4}(:[0-9]{1,4})?/)?";
    let image = (domain, name).prop_map(|(d, n)| format!("{d}{n}"));
    let field = |s: BoxedStrategy<String>| {
        prop_oneof![
            Just(Field::Remove),
            Just(Field::Keep),
            s.prop_map(Field::Set)
        ]
    };
    let tag = "[A-Za-z0-9_][A-Za-z0-9_.-]{0,20}".boxed();
    let digest = "[0-9a-f]{64}".prop_map(|h| format!("sha256:{h}")).boxed();
    (
        image.clone(),
        prop::option::of(field(image.boxed())),
        field(tag),
        field(digest),
    )
        .prop_filter_map(
            "NAME alone sets nothing",
            |(name, new_name, tag, digest)| {
                let with_key = new_name.is_some();
                let new_name = new_name.unwrap_or(Field::Remove);
                if !with_key && tag == Field::Remove && digest == Field::Remove {
                    return None;
                }
                Some(ImageSpec {
                    name,
                    new_name: if with_key && new_name == Field::Remove {
                        Field::Keep
                    } else {
                        new_name
                    },
                    tag,
                    digest,
                    text: String::new(),
                })
            },
        )
}

proptest! {
    #[test]
    fn any_text_parses_or_is_refused(text in "\\PC{0,40}|[a-z0-9=:@*/._\\[\\] -]{0,40}") {
        if let Ok(s) = ImageSpec::parse(&text) {
            prop_assert_eq!(ImageSpec::parse(&s.to_arg()).map(|p| p.to_arg()), Ok(s.to_arg()));
        }
    }

    #[test]
    fn valid_specs_round_trip(spec in valid_spec()) {
        let arg = spec.to_arg();
        let back = ImageSpec::parse(&arg).map_err(|e| e.to_string());
        prop_assert_eq!(back, Ok(ImageSpec { text: arg, ..spec }));
    }

    #[test]
    fn names_agree_with_distribution(name in names()) {
        let want = distribution_name(&name).is_some_and(|len| len <= 255);
        prop_assert_eq!(check_name(&name).is_ok(), want, "{:?}", check_name(&name));
    }

    #[test]
    fn tags_agree_with_distribution(tag in "[A-Za-z0-9_.:+ -]{0,130}") {
        let re = regex(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$");
        prop_assert_eq!(check_tag(&tag).is_ok(), re.is_match(&tag));
    }

    #[test]
    fn digests_agree_with_go_digest(hex in "[0-9a-fA-F]{30,130}", algo in "sha256|sha384|sha512|md5|sha-256") {
        let d = format!("{algo}:{hex}");
        let want = match algo.as_str() {
            "sha256" => 64,
            "sha384" => 96,
            "sha512" => 128,
            _ => 0,
        };
        let ok = hex.len() == want && !hex.chars().any(|c| c.is_ascii_uppercase());
        prop_assert_eq!(check_digest(&d).is_ok(), ok);
    }
}
