//! Template-level tests: parse + execute together, expectations taken from
//! Go's documented behaviour (and checked against helm where noted).

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;

/// Builtins plus a few Helm/Sprig-like helpers needed to build data.
fn test_funcs() -> FuncMap {
    let mut m = FuncMap::with_builtins();
    let any = Signature::variadic(&[], ArgType::Any);
    m.insert("list", any.clone(), |_, a| Ok(Value::list(a.to_vec())));
    m.insert("dict", any, |_, a| {
        let mut map = BTreeMap::new();
        for kv in a.chunks(2) {
            let k = kv[0].as_str().unwrap_or_default().to_string();
            map.insert(k, kv.get(1).cloned().unwrap_or(Value::Nil));
        }
        Ok(Value::map(map))
    });
    m.insert("upper", Signature::fixed(&[ArgType::String]), |_, a| {
        Ok(Value::from(
            a[0].as_str().unwrap_or_default().to_uppercase(),
        ))
    });
    m.insert("fail", Signature::fixed(&[ArgType::String]), |_, a| {
        Err(a[0].as_str().unwrap_or_default().to_string())
    });
    m.insert(
        "include",
        Signature::fixed(&[ArgType::String, ArgType::Any]),
        |ctx, a| {
            let name = a[0].as_str().unwrap_or_default();
            ctx.runner
                .execute_template(name, a[1].clone())
                .map(Value::from)
                .map_err(|e| e.to_string())
        },
    );
    m.insert(
        "tpl",
        Signature::fixed(&[ArgType::String, ArgType::Any]),
        |ctx, a| {
            let text = a[0].as_str().unwrap_or_default();
            ctx.runner
                .execute_text("gotpl", text, a[1].clone())
                .map(Value::from)
                .map_err(|e| e.to_string())
        },
    );
    m
}

fn set_with(files: &[(&str, &str)]) -> Result<TemplateSet, String> {
    let mut set = TemplateSet::new("gotpl", Arc::new(test_funcs()));
    for (name, text) in files {
        set.parse(name, text).map_err(|e| e.to_string())?;
    }
    Ok(set)
}

fn run_data(text: &str, data: Value) -> Result<String, String> {
    let set = set_with(&[("t", text)])?;
    set.execute("t", data, &ExecOptions::default())
        .map_err(|e| e.to_string())
}

fn run(text: &str) -> String {
    run_data(text, Value::map(BTreeMap::new())).unwrap_or_else(|e| format!("ERR {e}"))
}

fn data() -> Value {
    let mut inner = BTreeMap::new();
    inner.insert("k".to_string(), Value::from("v"));
    let mut m = BTreeMap::new();
    m.insert("m".to_string(), Value::map(inner));
    m.insert("f".to_string(), Value::Float(1e6));
    m.insert("i".to_string(), Value::Float(3.0));
    m.insert("s".to_string(), Value::from("str"));
    m.insert("nul".to_string(), Value::Nil);
    m.insert(
        "l".to_string(),
        Value::list(vec![Value::Float(1.0), Value::from("two"), Value::Nil]),
    );
    Value::map(m)
}

fn run_d(text: &str) -> String {
    run_data(text, data()).unwrap_or_else(|e| format!("ERR {e}"))
}

#[test]
fn text_actions_and_trim() {
    assert_eq!(run("a  {{- \"b\" -}}  c"), "abc");
    assert_eq!(run("x {{/* c */}} y"), "x  y");
    assert_eq!(run("{{ 1 }}\n{{- 2 }}"), "12");
    assert_eq!(run("{{-3}}"), "-3");
    assert_eq!(
        run("line1\n{{ if true -}}\n   yes   \n{{- end }}\nline3"),
        "line1\nyes\nline3"
    );
}

#[test]
fn literals() {
    assert_eq!(
        run("{{ 1.0 }} {{ 2.50 }} {{ 1e3 }} {{ 0x10 }} {{ 1_000 }} {{ 0o17 }} {{ 'a' }}"),
        "1 2.5 1000 16 1000 15 97"
    );
    assert_eq!(
        run("{{ 1000000 }}|{{ 1e6 }}|{{ 1e21 }}|{{ 0.00001 }}|{{ -0.0 }}"),
        "1000000|1e+06|1e+21|1e-05|-0"
    );
    assert_eq!(run("{{ \"a\\tb\" }}{{ `raw\\n` }}"), "a\tbraw\\n");
    assert_eq!(run("{{ true }} {{ false }}"), "true false");
    assert_eq!(run("{{ 18446744073709551615 }}"), "ERR template: t:1:3: executing \"t\" at <18446744073709551615>: 18446744073709551615 overflows int");
}

#[test]
fn conditionals_and_truth() {
    assert_eq!(run("{{ if 0 }}T{{ else }}F{{ end }}{{ if \"0\" }}T{{ end }}{{ if 0.0 }}T{{ else }}F{{ end }}"), "FTF");
    assert_eq!(
        run_d("{{ if .missing }}A{{ else if .s }}B{{ else }}C{{ end }}"),
        "B"
    );
    assert_eq!(run_d("{{ with .s }}[{{ . }}]{{ end }}{{ with .missing }}x{{ else with .i }}<{{ . }}>{{ end }}"), "[str]<3>");
    assert_eq!(
        run("{{ if nil }}T{{ end }}"),
        "ERR template: t:1:6: executing \"t\" at <nil>: nil is not a command"
    );
}

#[test]
fn range_forms() {
    assert_eq!(
        run("{{ range $k, $v := dict \"b\" 1 \"a\" 2 \"10\" 3 }}{{ $k }}={{ $v }};{{ end }}"),
        "10=3;a=2;b=1;"
    );
    assert_eq!(
        run("{{ range $i, $v := list \"x\" \"y\" }}{{ $i }}:{{ $v }} {{ end }}"),
        "0:x 1:y "
    );
    assert_eq!(run("{{ range list }}x{{ else }}empty{{ end }}"), "empty");
    assert_eq!(run("{{ range .missing }}x{{ else }}none{{ end }}"), "none");
    assert_eq!(
        run("{{ range list 1 2 3 4 5 }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ if eq . 4 }}{{ break }}{{ end }}{{ . }}{{ end }}"),
        "13"
    );
    assert_eq!(
        run("{{ range $i := 3 }}{{ $i }}{{ end }}"),
        "ERR template: t:1:15: executing \"t\" at <3>: range can't iterate over 3"
    );
    let set = set_with(&[("t", "{{ range $i := 3 }}{{ $i }}{{ end }}")]);
    let opts = ExecOptions {
        range_over_int: true,
        ..Default::default()
    };
    let out = set.and_then(|s| s.execute("t", Value::Nil, &opts).map_err(|e| e.to_string()));
    assert_eq!(out.as_deref(), Ok("012"));
}

#[test]
fn variables() {
    assert_eq!(
        run("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}"),
        "2"
    );
    assert_eq!(
        run("{{ $x := 1 }}{{ if true }}{{ $x := 2 }}{{ $x }}{{ end }}{{ $x }}"),
        "21"
    );
    assert_eq!(
        run(
            "{{ $x := \"a\" }}{{ range list 1 2 }}{{ $x = printf \"%s%d\" $x . }}{{ end }}{{ $x }}"
        ),
        "a12"
    );
    assert_eq!(
        run("{{ with $x := \"hi\" }}{{ $x }}{{ . }}{{ end }}"),
        "hihi"
    );
    assert_eq!(run_d("{{ range list 1 }}{{ $.s }}{{ end }}"), "str");
    assert_eq!(run_d("{{ $v := .m }}{{ $v.k }}"), "v");
}

#[test]
fn missing_and_nil() {
    assert_eq!(
        run_d("{{ .missing }}|{{ .nul }}|{{ .m.missing }}"),
        "<no value>|<no value>|<no value>"
    );
    assert_eq!(
        run_d("{{ printf \"%v\" .missing }}|{{ print nil }}|{{ .missing | print }}"),
        "<nil>|<nil>|<nil>"
    );
    assert_eq!(
        run_d("{{ .a.b }}"),
        "ERR template: t:1:5: executing \"t\" at <.a.b>: nil pointer evaluating interface {}.b"
    );
    assert_eq!(run_d("{{ .m.k.deeper }}"), "ERR template: t:1:5: executing \"t\" at <.m.k.deeper>: can't evaluate field deeper in type interface {}");
    assert_eq!(run_d("{{ $x := .missing }}{{ $x.foo }}"), "<no value>");
    assert_eq!(run_d("{{ .s.x }}"), "ERR template: t:1:5: executing \"t\" at <.s.x>: can't evaluate field x in type interface {}");
    assert_eq!(
        run_d("{{ $s := .s }}{{ $s.x }}"),
        "ERR template: t:1:19: executing \"t\" at <$s.x>: can't evaluate field x in type string"
    );
    assert_eq!(
        run_d("{{ .missing | upper }}"),
        "ERR template: t:1:14: executing \"t\" at <upper>: invalid value; expected string"
    );
    assert_eq!(run_d("{{ upper .i }}"), "ERR template: t:1:9: executing \"t\" at <.i>: wrong type for value; expected string; got float64");
}

#[test]
fn builtin_functions() {
    assert_eq!(run("{{ and 1 0 \"x\" }}|{{ and 1 \"y\" }}|{{ or 0 \"\" \"z\" }}|{{ or 0 \"\" }}|{{ or nil false }}"), "0|y|z||false");
    assert_eq!(
        run("{{ and false (fail \"boom\") }}|{{ or true (fail \"boom\") }}"),
        "false|true"
    );
    assert_eq!(run("{{ or }}"), "ERR template: t:1:3: executing \"t\" at <or>: wrong number of args for or: want at least 1 got 0");
    assert_eq!(
        run("{{ not 0 }} {{ not \"x\" }} {{ not nil }}"),
        "true false true"
    );
    assert_eq!(run_d("{{ len .l }} {{ len \"héllo\" }} {{ index .l 1 }} {{ index \"abc\" 1 }} {{ index .m \"k\" }}"), "3 6 two 98 v");
    assert_eq!(run_d("{{ index .l 10 }}"), "ERR template: t:1:3: executing \"t\" at <index .l 10>: error calling index: index out of range: 10");
    assert_eq!(
        run_d("{{ slice .l 1 }} {{ slice \"abcdef\" 1 3 }}"),
        "[two <nil>] bc"
    );
    assert_eq!(run("{{ eq 1 1 }} {{ eq \"a\" \"b\" \"a\" }} {{ ne 1 2 }} {{ lt 1 2 }} {{ le 2 2 }} {{ gt \"b\" \"a\" }} {{ ge 1.5 1.5 }}"), "true true true true true true true");
    assert_eq!(run("{{ eq 1 1.0 }}"), "ERR template: t:1:3: executing \"t\" at <eq 1 1.0>: error calling eq: incompatible types for comparison");
    assert_eq!(run_d("{{ eq .missing nil }} {{ eq .i 3.0 }}"), "true true");
    assert_eq!(
        run("{{ html \"<a>\" }} {{ html 1 2 }} {{ js \"a'b\" }} {{ urlquery \"a b\" }}"),
        "&lt;a&gt; 1 2 a\\'b a+b"
    );
    assert_eq!(
        run("{{ print 1 2 \"a\" \"b\" 3 }}|{{ println \"a\" 1 }}|"),
        "1 2ab3|a 1\n|"
    );
    assert_eq!(
        run("{{ printf \"%T %T %T\" 1 1.5 (list) }}"),
        "int float64 []interface {}"
    );
}

#[test]
fn pipelines_and_chains() {
    assert_eq!(run("{{ \"abc\" | printf \"%s-%s\" \"x\" }}"), "x-abc");
    assert_eq!(run("{{ (dict \"a\" (dict \"b\" 5)).a.b }}"), "5");
    assert_eq!(
        run("{{ 1 | 2 }}"),
        "ERR template: t:1: non executable command in pipeline stage 2"
    );
    assert_eq!(run("{{ \"x\" | len | printf \"%d\" }}"), "1");
    assert_eq!(
        run("{{ 3 4 }}"),
        "ERR template: t:1:3: executing \"t\" at <3>: can't give argument to non-function 3"
    );
    assert_eq!(
        run("{{ printf 1 }}"),
        "ERR template: t:1:10: executing \"t\" at <1>: expected string; found 1"
    );
}

#[test]
fn templates_define_block_include() {
    let set = set_with(&[
        ("a.tpl", "{{ define \"h\" }}H[{{ . }}]{{ end }}"),
        ("b.tpl", "{{ template \"h\" \"x\" }}|{{ template \"h\" }}|{{ include \"h\" 1 | upper }}|{{ block \"bl\" . }}B{{ end }}"),
    ]);
    let out = set.and_then(|s| {
        s.execute("b.tpl", Value::Nil, &ExecOptions::default())
            .map_err(|e| e.to_string())
    });
    assert_eq!(out.as_deref(), Ok("H[x]|H[<no value>]|H[1]|B"));
    assert_eq!(run("{{ template \"nope\" }}"), "ERR template: t:1:12: executing \"t\" at <{{template \"nope\"}}>: template \"nope\" not defined");
    assert_eq!(
        run("{{ include \"nope\" . }}"),
        "ERR template: t:1:3: executing \"t\" at <include \"nope\" .>: error calling include: template: no template \"nope\" associated with template \"gotpl\""
    );
}

#[test]
fn later_definitions_override_but_empty_ones_do_not() {
    let set = set_with(&[
        ("a", "{{ define \"x\" }}one{{ end }}"),
        ("b", "{{ define \"x\" }}two{{ end }}"),
        ("c", "{{ define \"x\" }} {{ end }}{{ template \"x\" }}"),
    ]);
    let out = set.and_then(|s| {
        s.execute("c", Value::Nil, &ExecOptions::default())
            .map_err(|e| e.to_string())
    });
    assert_eq!(out.as_deref(), Ok("two"));
    assert!(run("{{define \"d\"}}a{{end}}{{define \"d\"}}b{{end}}")
        .contains("multiple definition of template"));
}

#[test]
fn tpl_overlay_sees_parent_and_own_defines() {
    let set = set_with(&[
        ("h", "{{ define \"h\" }}H{{ . }}{{ end }}"),
        ("t", "{{ tpl \"{{ define \\\"in\\\" }}I{{ end }}{{ include \\\"in\\\" . }}{{ include \\\"h\\\" . }}\" 7 }}"),
    ]);
    let out = set.and_then(|s| {
        s.execute("t", Value::Nil, &ExecOptions::default())
            .map_err(|e| e.to_string())
    });
    assert_eq!(out.as_deref(), Ok("IH7"));
    assert!(
        run("{{ tpl \"{{ bad\" . }}").contains("template: gotpl:1: function \"bad\" not defined")
    );
}

#[test]
fn recursion_depth_limit() {
    let set = set_with(&[("r", "{{ define \"r\" }}{{ template \"r\" . }}{{ end }}")]);
    let err = set.and_then(|s| {
        s.execute("r", Value::Nil, &ExecOptions::default())
            .map_err(|e| e.to_string())
    });
    assert_eq!(
        err.err().as_deref(),
        Some("template: r:1:28: executing \"r\" at <{{template \"r\" .}}>: exceeded maximum template depth (100000)")
    );
}

#[test]
fn missingkey_modes() {
    let set = set_with(&[("t", "{{ .a }}")]);
    let opts = |k| ExecOptions {
        missing_key: k,
        ..ExecOptions::default()
    };
    let go = |k| {
        set.as_ref().map_err(Clone::clone).and_then(|s| {
            s.execute("t", Value::map(BTreeMap::new()), &opts(k))
                .map_err(|e| e.to_string())
        })
    };
    assert_eq!(go(MissingKey::Default).as_deref(), Ok("<no value>"));
    assert_eq!(
        go(MissingKey::Error).err().as_deref(),
        Some("template: t:1:3: executing \"t\" at <.a>: map has no entry for key \"a\"")
    );
    let set2 = set_with(&[("t", "{{ .a.b }}")]);
    let r = set2.and_then(|s| {
        s.execute("t", Value::map(BTreeMap::new()), &opts(MissingKey::Default))
            .map_err(|e| e.to_string())
    });
    assert_eq!(r.as_deref(), Ok("<no value>"));
}

#[test]
fn parallel_execution_of_one_parse() {
    use rayon::prelude::*;
    let set = set_with(&[("t", "{{ range . }}{{ . }}{{ end }}")]).ok();
    let outs: Vec<String> = (0..64i64)
        .into_par_iter()
        .map(|i| {
            let d = Value::list(vec![Value::Int(i), Value::Int(i + 1)]);
            set.as_ref()
                .and_then(|s| s.execute("t", d, &ExecOptions::default()).ok())
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(outs[5], "56");
    assert_eq!(outs[63], "6364");
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<TemplateSet>();
}

/// Every prefix of a set of tricky templates must parse or fail cleanly,
/// and execute or fail cleanly: a panic is a bug.
#[test]
fn truncated_inputs_never_panic() {
    let samples = [
        "a {{- if .m.k -}} x {{- else if eq .i 3.0 }}y{{ else }}{{ range $i, $v := .l }}{{ $i }}{{ break }}{{ end }}{{ end }}",
        "{{ define \"d\" }}{{ printf \"%[2]*.[1]*d|%-+#0 x|%q\" 3 4 5 \"\\u00e9\\x41\\101\" }}{{ end }}{{ template \"d\" . }}",
        "{{/* c */}}{{ with $x := (index .l 0) }}{{ $x }}{{ end }}{{ block \"b\" 'a' }}{{ 0x1p-2 }}{{ 1_0.5e1 }}{{ end }}",
        "{{ (list 1 2).x }}{{ .s | printf \"%s\" | len }}{{ $.m.k.z }}{{ slice \"héllo\" 1 2 }}{{ index \"é\" 0 }}",
        "{{ `raw\n` }}{{ \"\\q\" }}{{ '\\'' }}{{ -0x10 }}{{ 1e400 }}{{ +3 }}{{ .x@ }}",
    ];
    for text in samples {
        let mut cut: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
        cut.push(text.len());
        for end in cut {
            let _ = run_data(&text[..end], data());
        }
    }
    let fmts = [
        "%",
        "%[",
        "%[1",
        "%[1]",
        "%*",
        "%.*",
        "%-*d",
        "%[9]*d",
        "%.[2]d",
        "%!",
        "%é",
        "%#U%+q% x",
    ];
    for f in fmts {
        let _ = fmt::sprintf(
            f,
            &[Value::Int(-3), Value::from("é"), Value::Float(f64::NAN)],
        );
    }
}

/// Helm allows 1000 nested `include`s; that depth must not overflow a
/// 2 MiB thread stack (rayon's default).
#[test]
fn deep_include_recursion_on_small_stack() {
    let run_deep = || {
        let set = set_with(&[(
            "r",
            "{{ define \"r\" }}{{ if . }}x{{ include \"r\" (slice . 1) }}{{ end }}{{ end }}",
        )])?;
        let items = Value::list(vec![Value::Int(1); 1500]);
        set.execute("r", items, &ExecOptions::default())
            .map(|s| s.len())
            .map_err(|e| e.to_string())
    };
    let handle = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(run_deep);
    let out = handle.ok().and_then(|h| h.join().ok());
    assert_eq!(out, Some(Ok(1500)));
}
