//! Template inputs that used to abort hydrate (stack overflow) or exhaust
//! memory: deep `if` nesting and deep parentheses render as helm renders
//! them; `tpl` calling itself stops with an error naming the template.
//! How long each takes is measured on the release binary by
//! benches/limits.sh, not here: a loaded machine would fail a wall-clock
//! bound by chance. The 20 s timeout only turns a hang into a failure.

use std::fs;
use std::path::Path;
use std::time::Duration;

use crate::support::hydrate;

fn write(dir: &Path, name: &str, text: &str) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
    }
    fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

/// Runs `helm template rel c` on a chart with the given extra files and
/// returns (exit code, stdout, stderr).
fn template(files: &[(&str, &str)]) -> (Option<i32>, String, String) {
    template_with(&[], files)
}

/// [`template`] with extra arguments.
fn template_with(args: &[&str], files: &[(&str, &str)]) -> (Option<i32>, String, String) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let chart = dir.path().join("c");
    write(
        &chart,
        "Chart.yaml",
        "apiVersion: v2\nname: c\nversion: 0.1.0\n",
    );
    for (name, text) in files {
        write(&chart, name, text);
    }
    let out = hydrate()
        .current_dir(dir.path())
        .args(["helm", "template", "rel", "c"])
        .args(args)
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !err.contains("panicked") && !err.contains("overflow"),
        "{err}"
    );
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code(), stdout, err)
}

#[test]
fn five_thousand_nested_ifs_render() {
    let text = format!(
        "{}x: 1\n{}",
        "{{ if true }}".repeat(5000),
        "{{ end }}".repeat(5000)
    );
    let (code, out, err) = template(&[("templates/a.yaml", &text)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("x: 1\n"), "{out}");
}

#[test]
fn ten_thousand_and_one_nested_parentheses_render() {
    let n = 10_001;
    let text = format!("x: {{{{ {}1{} }}}}\n", "(".repeat(n), ")".repeat(n));
    let (code, out, err) = template(&[("templates/a.yaml", &text)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("x: 1\n"), "{out}");
}

/// helm 4.1.4 (Go 1.25) refuses parentheses nested past 10,000.
#[test]
fn helm_four_refuses_ten_thousand_and_one_nested_parentheses() {
    let n = 10_001;
    let text = format!("x: {{{{ {}1{} }}}}\n", "(".repeat(n), ")".repeat(n));
    let files = [("templates/a.yaml", text.as_str())];
    let (code, _, err) = template_with(&["--helm-version", "4"], &files);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("parse error at (c/templates/a.yaml:1): max expression depth exceeded"),
        "{err}"
    );
}

/// helm 3.17.3 renders 100,000 nested parentheses (up to about 430,000,
/// in 1 GB); hydrate renders 100,000 in 190 MB and refuses deeper, with
/// Go's message, the file and the line.
#[test]
fn a_hundred_thousand_and_one_nested_parentheses_are_refused() {
    let n = 100_001;
    let text = format!("x: {{{{ {}1{} }}}}\n", "(".repeat(n), ")".repeat(n));
    let (code, _, err) = template(&[("templates/a.yaml", &text)]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("parse error at (c/templates/a.yaml:1): max expression depth exceeded"),
        "{err}"
    );
}

/// helm 3.17.3 renders 100,000 nested parentheses (hydrate stops past that).
#[test]
fn twenty_thousand_and_one_nested_parentheses_render() {
    let n = 20_001;
    let text = format!("x: {{{{ {}1{} }}}}\n", "(".repeat(n), ")".repeat(n));
    let (code, out, err) = template(&[("templates/a.yaml", &text)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("x: 1\n"), "{out}");
}

#[test]
fn tpl_calling_itself_stops_by_depth() {
    let files = [
        ("values.yaml", "x: \"{{ tpl .Values.x . }}\"\n"),
        ("templates/a.yaml", "{{ tpl .Values.x . }}\n"),
    ];
    let (code, _, err) = template(&files);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("a.yaml") && err.contains("tpl nested more than 1000"),
        "{err}"
    );
}

#[test]
fn tpl_doubling_its_output_stops_by_size() {
    let files = [
        (
            "values.yaml",
            "x: \"{{ tpl .Values.x . }}{{ tpl .Values.x . }}\"\n",
        ),
        ("templates/a.yaml", "{{ tpl .Values.x . }}\n"),
    ];
    let (code, _, err) = template(&files);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("a.yaml") && err.contains("tpl"), "{err}");
}

/// A template that builds a map nested `n` deep with `dict` in a loop and
/// applies `f` to it, printing the length of the result.
fn nested(n: usize, f: &str) -> String {
    format!(
        "{{{{- $d := dict }}}}{{{{- range until {n} }}}}{{{{- $d = dict \"a\" $d }}}}{{{{- end }}}}x: {{{{ {f} $d | len }}}}\n"
    )
}

/// helm 3.17.3 prints these lengths for a map nested 20,001 deep: toJson and
/// toString have no depth limit; toYaml and toPrettyJson re-read the text
/// with parsers that stop past 10,000 levels, and print "" on error.
#[test]
fn converters_of_a_value_nested_twenty_thousand_deep_match_helm() {
    for (f, want) in [
        ("toJson", "x: 120002\n"),
        ("toRawJson", "x: 120002\n"),
        ("toString", "x: 140005\n"),
        ("toYaml", "x: 0\n"),
        ("toPrettyJson", "x: 0\n"),
    ] {
        let (code, out, err) = template(&[("templates/a.yaml", &nested(20_000, f))]);
        assert_eq!(code, Some(0), "{f}: {err}");
        assert!(out.ends_with(want), "{f}: {out}");
    }
}

/// At 10,000 levels toYaml still prints (helm: 100,000,001 bytes).
#[test]
fn to_yaml_of_ten_thousand_levels_prints() {
    let (code, out, err) = template(&[("templates/a.yaml", &nested(9_999, "toYaml"))]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.ends_with("x: 100000001\n"), "{out}");
}

const SELF: &str = "{{- $d := dict \"a\" 1 }}{{- $_ := set $d \"x\" $d }}";

/// Go's json reports the cycle, so helm's toJson/toYaml print "".
#[test]
fn json_and_yaml_of_a_map_containing_itself_print_nothing() {
    for f in ["toJson", "toYaml", "toPrettyJson"] {
        let text = format!("{SELF}x: {{{{ {f} $d | quote }}}}\n");
        let (code, out, err) = template(&[("templates/a.yaml", &text)]);
        assert_eq!(code, Some(0), "{f}: {err}");
        assert!(out.ends_with("x: \"\"\n"), "{f}: {out}");
    }
}

/// helm overflows its stack printing a map that contains itself (exit 2);
/// hydrate stops with an error naming the template and line.
#[test]
fn printing_a_map_containing_itself_is_an_error() {
    for f in [
        "toString $d",
        "$d",
        "printf \"%v\" $d",
        "print $d",
        "deepCopy $d",
        "merge $d $d",
    ] {
        let text = format!("{SELF}\nx: {{{{ {f} }}}}\n");
        let (code, _, err) = template(&[("templates/a.yaml", &text)]);
        assert_eq!(code, Some(1), "{f}: {err}");
        assert!(
            err.contains("c/templates/a.yaml:2:") && err.contains("contains itself"),
            "{f}: {err}"
        );
    }
}

/// `deepEqual` treats pairs already under comparison as equal, as
/// reflect.DeepEqual does; `toToml` returns its error text, as Sprig does.
#[test]
fn comparing_and_toml_of_maps_containing_themselves_end() {
    let text = format!(
        "{SELF}{{{{- $e := dict \"a\" 1 }}}}{{{{- $_ := set $e \"x\" $e }}}}x: {{{{ deepEqual $d $e }}}}\ny: {{{{ toToml $d | quote }}}}\n"
    );
    let (code, out, err) = template(&[("templates/a.yaml", &text)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.ends_with("x: true\ny: \"toml: map[string]interface {} contains itself\"\n"),
        "{out}"
    );
}

/// helm 3.17.3 parses 50,000 nested TOML arrays (and prints this digest of
/// their JSON); so does hydrate, on a stack sized to the nesting.
#[test]
fn from_toml_of_fifty_thousand_nested_arrays_matches_helm() {
    let text = "{{- $s := printf \"a = %s1%s\" (repeat 50000 \"[\") (repeat 50000 \"]\") }}x: {{ fromToml $s | toJson | len }} {{ fromToml $s | toJson | sha256sum }}\n";
    let (code, out, err) = template(&[("templates/a.yaml", text)]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.ends_with(
            "x: 100007 5b5b9a4bce82d31091dca8acd3c79e5d352e4452a7c2a4d7fb151c1b2a4cf4b7\n"
        ),
        "{out}"
    );
}

/// Past 100,000 levels (where printing the value stops too) `fromToml` is
/// an error naming the template; helm parses on until its 1 GB stack
/// runs out (about 700,000 levels, exit 2).
#[test]
fn from_toml_nested_past_the_limit_is_an_error() {
    let text = "{{- $s := printf \"a = %s1%s\" (repeat 100001 \"[\") (repeat 100001 \"]\") }}x: {{ fromToml $s | len }}\n";
    let (code, _, err) = template(&[("templates/a.yaml", text)]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("a.yaml:1") && err.contains("nested more than 100000 levels"),
        "{err}"
    );
}

/// libyaml-safer panics on a tag followed by `,` in a flow collection
/// (found by the strategic_merge fuzz target); the parser catches it as a
/// syntax error naming the file, as kustomize's go-yaml refuses the input,
/// and no panic text reaches stderr.
#[test]
fn a_tag_before_a_comma_in_a_flow_mapping_is_a_quiet_syntax_error() {
    let tmp = tempfile::tempdir().unwrap();
    write(tmp.path(), "kustomization.yaml", "resources: [cm.yaml]\n");
    write(
        tmp.path(),
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {a: !!str, b: c}\n",
    );
    let out = hydrate()
        .args(["kustomize", "build"])
        .arg(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    // The line of the last event the parser produced (the `a` key), never 0.
    assert!(stderr.contains("cm.yaml:5:"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}
