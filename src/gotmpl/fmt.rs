//! Go's `fmt` package as templates use it: `Sprint`, `Sprintln`, `Sprintf`
//! with verbs, flags, width, precision and argument indexes, and the error
//! annotations (`%!d(string=x)`, `%!s(MISSING)`, `%!(EXTRA ...)`).

use super::float::{format_float, FloatVerb};
use super::value::Value;
use super::walk::{Nesting, Path};

use super::quote::quote_with;
pub(crate) use super::quote::{is_print, quote, unicode_sharp};

/// Go's `fmt.Sprint`: spaces between operands when neither is a string.
pub fn sprint(args: &[Value]) -> String {
    sprint_into(args).buf
}

/// Go's `fmt.Sprintln`: always spaces, then a newline.
#[cfg(test)]
pub fn sprintln(args: &[Value]) -> String {
    sprintln_into(args).buf
}

/// Go's `fmt.Sprintf`.
pub fn sprintf(format: &str, args: &[Value]) -> String {
    sprintf_into(format, args).buf
}

/// Formats one value with `%v` (Go's `fmt.Sprint(v)` for a single operand).
/// A map that contains itself prints as far as the cycle (Go overflows its
/// stack there); [`try_to_string`] reports it instead.
pub fn to_string(v: &Value) -> String {
    to_string_into(v).buf
}

/// [`to_string`], failing on a map that contains itself or a value nested
/// past [`super::walk::MAX_DEPTH`]. The message names the value's type.
pub fn try_to_string(v: &Value) -> Result<String, String> {
    to_string_into(v).finish()
}

/// [`sprint`], failing as [`try_to_string`] does.
pub fn try_sprint(args: &[Value]) -> Result<String, String> {
    sprint_into(args).finish()
}

/// [`sprintln`], failing as [`try_to_string`] does.
pub fn try_sprintln(args: &[Value]) -> Result<String, String> {
    sprintln_into(args).finish()
}

/// [`sprintf`], failing as [`try_to_string`] does.
pub fn try_sprintf(format: &str, args: &[Value]) -> Result<String, String> {
    sprintf_into(format, args).finish()
}

/// The printer after `Sprint`: the plain and `try_` forms differ only in
/// whether a fault is reported.
fn sprint_into(args: &[Value]) -> Printer {
    let mut p = Printer::default();
    let mut prev_string = false;
    for (i, a) in args.iter().enumerate() {
        let is_string = matches!(a, Value::Str(_));
        if i > 0 && !is_string && !prev_string {
            p.buf.push(' ');
        }
        p.print_arg(a, 'v');
        prev_string = is_string;
    }
    p
}

fn sprintln_into(args: &[Value]) -> Printer {
    let mut p = Printer::default();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            p.buf.push(' ');
        }
        p.print_arg(a, 'v');
    }
    p.buf.push('\n');
    p
}

fn sprintf_into(format: &str, args: &[Value]) -> Printer {
    let mut p = Printer::default();
    p.do_printf(format, args);
    p
}

fn to_string_into(v: &Value) -> Printer {
    let mut p = Printer::default();
    p.print_arg(v, 'v');
    p
}

#[derive(Default, Clone, Copy)]
struct Flags {
    plus: bool,
    minus: bool,
    sharp: bool,
    space: bool,
    zero: bool,
    plus_v: bool,
    sharp_v: bool,
    wid: Option<usize>,
    prec: Option<usize>,
}

#[derive(Default)]
struct Printer {
    buf: String,
    f: Flags,
    reordered: bool,
    good_arg_num: bool,
    /// Containers open on the way to the value being printed.
    path: Path,
    /// Why printing stopped early: the container type and the reason.
    fault: Option<(String, Nesting)>,
}

/// Go's `parsenum`: digits at `i`, returning value and new index.
fn parse_num(b: &[u8], mut i: usize, end: usize) -> (Option<usize>, usize) {
    let start = i;
    let mut n: usize = 0;
    while i < end && b[i].is_ascii_digit() {
        if n > 1_000_000 {
            return (None, end);
        }
        n = n * 10 + (b[i] - b'0') as usize;
        i += 1;
    }
    (if i > start { Some(n) } else { None }, i)
}

/// Go's `intFromArg` for `*` widths: an int argument within ±1e6.
fn int_from_arg(args: &[Value], arg_num: usize) -> (Option<i64>, usize) {
    let Some(a) = args.get(arg_num) else {
        return (None, arg_num);
    };
    let n = match a {
        Value::Int(i) | Value::Int64(i) => Some(*i),
        Value::Uint8(u) => Some(*u as i64),
        _ => None,
    };
    (n.filter(|n| n.abs() <= 1_000_000), arg_num + 1)
}

impl Printer {
    fn finish(self) -> Result<String, String> {
        match self.fault {
            None => Ok(self.buf),
            Some((type_name, why)) => Err(why.describe(&type_name)),
        }
    }

    fn pad(&mut self, s: &str) {
        let Some(w) = self.f.wid else {
            self.buf.push_str(s);
            return;
        };
        let n = s.chars().count();
        if n >= w {
            self.buf.push_str(s);
            return;
        }
        let padc = if self.f.zero { '0' } else { ' ' };
        if self.f.minus {
            self.buf.push_str(s);
            self.buf.extend(std::iter::repeat_n(' ', w - n));
        } else {
            self.buf.extend(std::iter::repeat_n(padc, w - n));
            self.buf.push_str(s);
        }
    }

    fn argument_index(
        &mut self,
        b: &[u8],
        i: usize,
        arg_num: usize,
        nargs: usize,
    ) -> (usize, usize, bool) {
        if i >= b.len() || b[i] != b'[' {
            return (arg_num, i, false);
        }
        self.reordered = true;
        let rest = &b[i..];
        let mut parsed = (0usize, 1usize, false);
        if rest.len() >= 3 {
            if let Some(close) = rest.iter().position(|&c| c == b']') {
                let (n, ni) = parse_num(rest, 1, close);
                parsed = match n {
                    Some(n) if ni == close && n >= 1 => (n - 1, close + 1, true),
                    Some(_) if ni == close => (usize::MAX, close + 1, true),
                    _ => (0, close + 1, false),
                };
            }
        }
        let (index, wid, ok) = parsed;
        if ok && index < nargs {
            return (index, i + wid, true);
        }
        self.good_arg_num = false;
        (arg_num, i + wid, ok)
    }

    /// Parses `[n]`, width (`*` or digits) and `.precision` of one verb;
    /// returns the argument number, index and whether an index ended it.
    fn width_and_precision(
        &mut self,
        b: &[u8],
        mut i: usize,
        mut arg_num: usize,
        args: &[Value],
    ) -> (usize, usize, bool) {
        let end = b.len();
        let mut after_index;
        (arg_num, i, after_index) = self.argument_index(b, i, arg_num, args.len());
        if i < end && b[i] == b'*' {
            i += 1;
            let (w, n) = int_from_arg(args, arg_num);
            arg_num = n;
            match w {
                None => self.buf.push_str("%!(BADWIDTH)"),
                Some(w) if w < 0 => {
                    self.f.wid = Some(w.unsigned_abs() as usize);
                    self.f.minus = true;
                    self.f.zero = false;
                }
                Some(w) => self.f.wid = Some(w as usize),
            }
            after_index = false;
        } else {
            let (w, ni) = parse_num(b, i, end);
            self.f.wid = w;
            i = ni;
            if after_index && w.is_some() {
                self.good_arg_num = false;
            }
        }
        if i + 1 < end && b[i] == b'.' {
            i += 1;
            if after_index {
                self.good_arg_num = false;
            }
            (arg_num, i, after_index) = self.argument_index(b, i, arg_num, args.len());
            if i < end && b[i] == b'*' {
                i += 1;
                let (p, n) = int_from_arg(args, arg_num);
                arg_num = n;
                match p {
                    Some(p) if p >= 0 => self.f.prec = Some(p as usize),
                    Some(_) => self.f.prec = None,
                    None => self.buf.push_str("%!(BADPREC)"),
                }
                after_index = false;
            } else {
                let (p, ni) = parse_num(b, i, end);
                self.f.prec = Some(p.unwrap_or(0));
                i = ni;
            }
        }
        (arg_num, i, after_index)
    }

    /// Go's `%!(EXTRA type=value, ...)` for unused arguments.
    fn extra_args(&mut self, extra: &[Value]) {
        self.f = Flags::default();
        self.buf.push_str("%!(EXTRA ");
        for (k, a) in extra.iter().enumerate() {
            if k > 0 {
                self.buf.push_str(", ");
            }
            if a.is_nil() {
                self.buf.push_str("<nil>");
            } else {
                self.buf.push_str(&a.type_name());
                self.buf.push('=');
                self.print_arg(a, 'v');
            }
        }
        self.buf.push(')');
    }

    fn do_printf(&mut self, format: &str, args: &[Value]) {
        let b = format.as_bytes();
        let end = b.len();
        let mut arg_num = 0usize;
        let mut i = 0;
        while i < end {
            self.good_arg_num = true;
            let last = i;
            while i < end && b[i] != b'%' {
                i += 1;
            }
            self.buf.push_str(&format[last..i]);
            if i >= end {
                break;
            }
            i += 1;
            self.f = Flags::default();
            while i < end {
                match b[i] {
                    b'#' => self.f.sharp = true,
                    b'0' => self.f.zero = !self.f.minus,
                    b'+' => self.f.plus = true,
                    b'-' => {
                        self.f.minus = true;
                        self.f.zero = false;
                    }
                    b' ' => self.f.space = true,
                    _ => break,
                }
                i += 1;
            }
            let (n, ni, after_index) = self.width_and_precision(b, i, arg_num, args);
            (arg_num, i) = (n, ni);
            if !after_index {
                (arg_num, i, _) = self.argument_index(b, i, arg_num, args.len());
            }
            let Some(verb) = format[i.min(end)..].chars().next() else {
                self.buf.push_str("%!(NOVERB)");
                break;
            };
            i += verb.len_utf8();
            if verb == '%' {
                self.buf.push('%');
            } else if !self.good_arg_num {
                self.buf.push_str(&format!("%!{verb}(BADINDEX)"));
            } else if arg_num >= args.len() {
                self.buf.push_str(&format!("%!{verb}(MISSING)"));
            } else {
                if verb == 'v' {
                    self.f.sharp_v = self.f.sharp;
                    self.f.sharp = false;
                    self.f.plus_v = self.f.plus;
                    self.f.plus = false;
                }
                self.print_arg(&args[arg_num], verb);
                arg_num += 1;
            }
        }
        if !self.reordered && arg_num < args.len() {
            self.extra_args(&args[arg_num..]);
        }
    }

    /// Go's `printArg` (depth 0).
    fn print_arg(&mut self, v: &Value, verb: char) {
        if v.is_nil() {
            match verb {
                'T' | 'v' => self.pad("<nil>"),
                _ => self.bad_verb(verb, None),
            }
            return;
        }
        if verb == 'T' {
            let t = v.type_name();
            self.fmt_s(&t);
            return;
        }
        self.print_value(v, verb, 0);
    }

    fn bad_verb(&mut self, verb: char, v: Option<&Value>) {
        self.buf.push_str("%!");
        self.buf.push(verb);
        self.buf.push('(');
        match v {
            Some(v) if !v.is_nil() => {
                self.buf.push_str(&v.type_name());
                self.buf.push('=');
                let saved = self.f;
                self.print_value(v, 'v', 0);
                self.f = saved;
            }
            _ => self.buf.push_str("<nil>"),
        }
        self.buf.push(')');
    }

    fn print_value(&mut self, v: &Value, verb: char, depth: usize) {
        match v {
            Value::Invalid | Value::Nil => {
                if self.f.sharp_v {
                    self.buf.push_str("interface {}(nil)");
                } else {
                    self.buf.push_str("<nil>");
                }
            }
            Value::Bool(b) => match verb {
                't' | 'v' => self.pad(if *b { "true" } else { "false" }),
                _ => self.bad_verb(verb, Some(v)),
            },
            Value::Int(i) | Value::Int64(i) => self.fmt_integer(*i as u64, true, verb, v),
            Value::Uint8(u) => self.fmt_integer(*u as u64, false, verb, v),
            Value::Float(f) => self.fmt_float(*f, verb, v),
            Value::Str(s) => self.fmt_string(s, verb, v),
            Value::Bytes(b) => self.fmt_bytes(b, verb, v),
            Value::List(_) | Value::Map(_) => {
                if self.fault.is_some() {
                    return;
                }
                let r = Path::descend_within(
                    self,
                    |p| &mut p.path,
                    v,
                    |p| p.print_container(v, verb, depth),
                );
                if let Err(why) = r {
                    self.fault = Some((v.type_name(), why));
                }
            }
            Value::Object(o) => {
                if let Some(s) = o.to_go_string() {
                    if !self.f.sharp_v && matches!(verb, 'v' | 's' | 'x' | 'X' | 'q') {
                        self.fmt_string(&s, verb, v);
                        return;
                    }
                }
                match (o.underlying(), o.struct_fields()) {
                    (Some(u), _) => self.print_value(&u, verb, depth),
                    (None, Some(fields)) if !self.f.sharp_v => {
                        self.print_struct(&fields, verb, depth)
                    }
                    (None, _) => self.pad(&format!("&{{{}}}", o.type_name())),
                }
            }
        }
    }

    /// fmt's `printValue` of a struct: `{a b}`, or `{A:a B:b}` for `%+v`.
    fn print_struct(&mut self, fields: &[(String, Value)], verb: char, depth: usize) {
        self.buf.push('{');
        for (i, (name, x)) in fields.iter().enumerate() {
            if i > 0 {
                self.buf.push(' ');
            }
            if self.f.plus_v {
                self.buf.push_str(name);
                self.buf.push(':');
            }
            self.print_value(x, verb, depth + 1);
        }
        self.buf.push('}');
    }

    fn print_container(&mut self, v: &Value, verb: char, depth: usize) {
        match v {
            Value::List(l) => self.print_seq(
                &v.type_name(),
                l.items.iter().map(|x| (None, x)),
                verb,
                depth,
                false,
            ),
            Value::Map(m) => {
                let entries = m.entries();
                self.print_seq(
                    &v.type_name(),
                    entries.iter().map(|(k, x)| (Some(k.as_str()), x)),
                    verb,
                    depth,
                    true,
                );
            }
            _ => {}
        }
    }

    fn print_seq<'a>(
        &mut self,
        type_name: &str,
        items: impl Iterator<Item = (Option<&'a str>, &'a Value)>,
        verb: char,
        depth: usize,
        is_map: bool,
    ) {
        if self.f.sharp_v {
            self.buf.push_str(type_name);
            self.buf.push('{');
        } else {
            self.buf.push_str(if is_map { "map[" } else { "[" });
        }
        for (i, (key, x)) in items.enumerate() {
            if i > 0 {
                self.buf.push_str(if self.f.sharp_v { ", " } else { " " });
            }
            if let Some(k) = key {
                self.fmt_string(k, verb, &Value::from(k));
                self.buf.push(':');
            }
            self.print_value(x, verb, depth + 1);
        }
        self.buf.push(if self.f.sharp_v { '}' } else { ']' });
    }

    fn fmt_s(&mut self, s: &str) {
        let s = match self.f.prec {
            Some(p) => s.chars().take(p).collect::<String>(),
            None => s.to_string(),
        };
        self.pad(&s);
    }

    fn fmt_string(&mut self, s: &str, verb: char, v: &Value) {
        match verb {
            'v' if self.f.sharp_v => self.fmt_q(s),
            'v' | 's' => self.fmt_s(s),
            'x' | 'X' => self.fmt_hex_bytes(s.as_bytes(), verb == 'X'),
            'q' => self.fmt_q(s),
            _ => self.bad_verb(verb, Some(v)),
        }
    }

    fn fmt_q(&mut self, s: &str) {
        let s: String = match self.f.prec {
            Some(p) => s.chars().take(p).collect(),
            None => s.to_string(),
        };
        let q = if self.f.sharp
            && !s.contains('`')
            && s.chars().all(|c| c == '\t' || !c.is_control())
        {
            format!("`{s}`")
        } else {
            quote_with(&s, '"', self.f.plus)
        };
        self.pad(&q);
    }

    fn fmt_hex_bytes(&mut self, b: &[u8], upper: bool) {
        let n = self.f.prec.map_or(b.len(), |p| p.min(b.len()));
        let mut out = String::new();
        for (i, byte) in b[..n].iter().enumerate() {
            if self.f.space && i > 0 {
                out.push(' ');
            }
            if self.f.sharp && (self.f.space || i == 0) {
                out.push_str(if upper { "0X" } else { "0x" });
            }
            if upper {
                out.push_str(&format!("{byte:02X}"));
            } else {
                out.push_str(&format!("{byte:02x}"));
            }
        }
        self.pad(&out);
    }

    fn fmt_bytes(&mut self, b: &[u8], verb: char, v: &Value) {
        match verb {
            'v' | 'd' => {
                if self.f.sharp_v {
                    self.buf.push_str("[]byte{");
                    let items: Vec<String> = b.iter().map(|c| format!("0x{c:x}")).collect();
                    self.buf.push_str(&items.join(", "));
                    self.buf.push('}');
                    return;
                }
                self.buf.push('[');
                for (i, c) in b.iter().enumerate() {
                    if i > 0 {
                        self.buf.push(' ');
                    }
                    self.fmt_integer(*c as u64, false, verb, v);
                }
                self.buf.push(']');
            }
            's' => self.fmt_s(&String::from_utf8_lossy(b)),
            'x' | 'X' => self.fmt_hex_bytes(b, verb == 'X'),
            'q' => self.fmt_q(&String::from_utf8_lossy(b)),
            _ => {
                let items: Vec<Value> = b.iter().map(|c| Value::Uint8(*c)).collect();
                self.print_seq("[]uint8", items.iter().map(|x| (None, x)), verb, 0, false);
            }
        }
    }

    fn fmt_integer(&mut self, u: u64, signed: bool, verb: char, v: &Value) {
        let (base, upper) = match verb {
            'v' if self.f.sharp_v && !signed => {
                self.pad(&format!("0x{u:x}"));
                return;
            }
            'v' | 'd' => (10, false),
            'b' => (2, false),
            'o' | 'O' => (8, false),
            'x' => (16, false),
            'X' => (16, true),
            'c' | 'q' | 'U' => return self.fmt_char(u, verb),
            _ => return self.bad_verb(verb, Some(v)),
        };
        let negative = signed && (u as i64) < 0;
        let mag = if negative {
            (u as i64).unsigned_abs()
        } else {
            u
        };
        let mut digits = match (base, upper) {
            (2, _) => format!("{mag:b}"),
            (8, _) => format!("{mag:o}"),
            (16, false) => format!("{mag:x}"),
            (16, true) => format!("{mag:X}"),
            _ => mag.to_string(),
        };
        let mut prec = 0;
        if let Some(p) = self.f.prec {
            prec = p;
            if p == 0 && mag == 0 {
                let saved = self.f.zero;
                self.f.zero = false;
                self.pad("");
                self.f.zero = saved;
                return;
            }
        } else if self.f.zero && !self.f.minus {
            if let Some(w) = self.f.wid {
                prec = w;
                if negative || self.f.plus || self.f.space {
                    prec = prec.saturating_sub(1);
                }
            }
        }
        if digits.len() < prec {
            digits = "0".repeat(prec - digits.len()) + &digits;
        }
        if self.f.sharp {
            match base {
                2 => digits.insert_str(0, "0b"),
                8 if !digits.starts_with('0') => digits.insert(0, '0'),
                16 => digits.insert_str(0, if upper { "0X" } else { "0x" }),
                _ => {}
            }
        }
        if verb == 'O' {
            digits.insert_str(0, "0o");
        }
        if negative {
            digits.insert(0, '-');
        } else if self.f.plus {
            digits.insert(0, '+');
        } else if self.f.space {
            digits.insert(0, ' ');
        }
        let saved = self.f.zero;
        self.f.zero = false;
        self.pad(&digits);
        self.f.zero = saved;
    }

    /// `%c`, `%q` and `%U` of an integer (Go's `fmtC`, `fmtQc`, `fmtUnicode`).
    fn fmt_char(&mut self, u: u64, verb: char) {
        let c = char::from_u32(u as u32)
            .filter(|_| u <= 0x10FFFF)
            .unwrap_or('\u{FFFD}');
        let s = match verb {
            'c' => c.to_string(),
            'q' => quote_with(&c.to_string(), '\'', self.f.plus),
            _ => {
                let mut s = format!("U+{u:04X}");
                if self.f.sharp && u <= 0x10FFFF && is_print(c) {
                    s.push_str(&format!(" '{c}'"));
                }
                s
            }
        };
        self.pad(&s);
    }

    fn fmt_float(&mut self, x: f64, verb: char, v: &Value) {
        let (fv, default_prec) = match verb {
            'v' | 'g' => (FloatVerb::G, None),
            'G' => (FloatVerb::UpperG, None),
            'e' => (FloatVerb::E, Some(6)),
            'E' => (FloatVerb::UpperE, Some(6)),
            'f' | 'F' => (FloatVerb::F, Some(6)),
            'b' => (FloatVerb::B, None),
            'x' => (FloatVerb::X, None),
            'X' => (FloatVerb::UpperX, None),
            _ => return self.bad_verb(verb, Some(v)),
        };
        let prec = self.f.prec.or(default_prec);
        let mut num = format_float(x, fv, prec);
        if !num.starts_with(['-', '+']) {
            num.insert(0, '+');
        }
        if self.f.space && num.starts_with('+') && !self.f.plus {
            num.replace_range(0..1, " ");
        }
        if num[1..].starts_with(['I', 'N']) {
            let saved = self.f.zero;
            self.f.zero = false;
            if num[1..].starts_with('N') && !self.f.space && !self.f.plus {
                num.remove(0);
            }
            self.pad(&num);
            self.f.zero = saved;
            return;
        }
        if self.f.plus || !num.starts_with('+') {
            if let Some(w) = self
                .f
                .wid
                .filter(|&w| self.f.zero && !self.f.minus && w > num.len())
            {
                let (sign, rest) = num.split_at(1);
                self.buf.push_str(sign);
                self.buf.push_str(&"0".repeat(w - num.len()));
                self.buf.push_str(rest);
                return;
            }
            self.pad(&num);
            return;
        }
        let unsigned = num[1..].to_string();
        self.pad(&unsigned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: &str) -> Value {
        Value::from(x)
    }

    #[test]
    fn printf_basic_verbs() {
        let args = [s("s"), Value::Int(42), Value::Bool(true), s("q")];
        assert_eq!(sprintf("%s|%d|%v|%q", &args), "s|42|true|\"q\"");
        let args = [
            Value::Int(255),
            Value::Int(255),
            Value::Int(8),
            Value::Int(5),
            Value::Int(65),
            Value::Int(9731),
        ];
        assert_eq!(sprintf("%x %X %o %b %c %U", &args), "ff FF 10 101 A U+2603");
        assert_eq!(
            sprintf(
                "%08b|%+d|%5d|%-5d|",
                &[Value::Int(5), Value::Int(3), Value::Int(-7), Value::Int(7)]
            ),
            "00000101|+3|   -7|7    |"
        );
    }

    #[test]
    fn printf_floats() {
        let f = |x: f64| Value::Float(x);
        let args = [
            f(3.14158),
            f(2.0),
            f(1234.5678),
            f(0.000012),
            f(3.14158),
            f(3.14158),
        ];
        assert_eq!(
            sprintf("%05.2f|%.3f|%e|%g|%8.3f|%-8.2f|", &args),
            "03.14|2.000|1.234568e+03|1.2e-05|   3.142|3.14    |"
        );
        assert_eq!(
            sprintf(
                "%v %v %v %v",
                &[f(1e6), f(1e21), f(0.000001), f(123456789.0)]
            ),
            "1e+06 1e+21 1e-06 1.23456789e+08"
        );
        assert_eq!(sprintf("%d", &[f(3.0)]), "%!d(float64=3)");
        assert_eq!(sprintf("%f", &[f(3.0)]), "3.000000");
    }

    #[test]
    fn printf_strings_and_errors() {
        assert_eq!(
            sprintf(
                "%5s|%-5s|%.2s|%5.1s|",
                &[s("ab"), s("ab"), s("abcdef"), s("xyz")]
            ),
            "   ab|ab   |ab|    x|"
        );
        assert_eq!(
            sprintf("%x %X % x", &[s("hi"), s("hi"), s("hi")]),
            "6869 6869 68 69"
        );
        assert_eq!(sprintf("%s", &[Value::Int(5)]), "%!s(int=5)");
        assert_eq!(sprintf("%s %s", &[s("a")]), "a %!s(MISSING)");
        assert_eq!(sprintf("%s", &[s("a"), s("b")]), "a%!(EXTRA string=b)");
        assert_eq!(
            sprintf("%v|%s|%d", &[Value::Nil, Value::Nil, Value::Nil]),
            "<nil>|%!s(<nil>)|%!d(<nil>)"
        );
        assert_eq!(sprintf("%%|%5.2f%%", &[Value::Float(99.5)]), "%|99.50%");
        assert_eq!(
            sprintf(
                "%*d|%-*d|",
                &[Value::Int(5), Value::Int(42), Value::Int(4), Value::Int(7)]
            ),
            "   42|7   |"
        );
        assert_eq!(sprintf("%[2]s %[1]s", &[s("a"), s("b")]), "b a");
        assert_eq!(sprintf("%", &[]), "%!(NOVERB)");
        assert_eq!(sprintf("%[3]d", &[Value::Int(1)]), "%!d(BADINDEX)");
    }

    #[test]
    fn composite_values() {
        let l = Value::list(vec![Value::Float(1.0), s("a")]);
        assert_eq!(
            sprintf("%#v", std::slice::from_ref(&l)),
            "[]interface {}{1, \"a\"}"
        );
        assert_eq!(sprintf("%v", std::slice::from_ref(&l)), "[1 a]");
        let l = Value::list(vec![s("a"), s("b")]);
        assert_eq!(
            sprintf("%q %d", &[l.clone(), l]),
            "[\"a\" \"b\"] [%!d(string=a) %!d(string=b)]"
        );
        let mut m = std::collections::BTreeMap::new();
        m.insert("b".to_string(), Value::Float(1.0));
        m.insert("a".to_string(), s("x"));
        let m = Value::map(m);
        assert_eq!(to_string(&m), "map[a:x b:1]");
        let with_nil = Value::list(vec![Value::Int(1), Value::Nil]);
        assert_eq!(to_string(&with_nil), "[1 <nil>]");
        assert_eq!(
            sprintf("%T %T", &[m, Value::Nil]),
            "map[string]interface {} <nil>"
        );
    }

    #[test]
    fn sprint_spacing() {
        let args = [Value::Int(1), Value::Int(2), s("a"), s("b"), Value::Int(3)];
        assert_eq!(sprint(&args), "1 2ab3");
        assert_eq!(sprintln(&[s("a"), Value::Int(1)]), "a 1\n");
    }
}
