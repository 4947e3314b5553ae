//! Tokenizer equivalent to Go's `text/template/parse/lex.go` with the default
//! `{{`/`}}` delimiters, including trim markers and comments.

/// Token kinds, named after Go's `itemType`s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Lexing failed; the text is the message.
    Error,
    Bool,
    /// A single printable ASCII character such as `,`.
    Char,
    CharConstant,
    Complex,
    /// `=`.
    Assign,
    /// `:=`.
    Declare,
    Eof,
    Field,
    Identifier,
    LeftDelim,
    LeftParen,
    Number,
    Pipe,
    RawString,
    RightDelim,
    RightParen,
    Space,
    String,
    Text,
    Variable,
    // Keywords (Go prints them as `<word>`).
    Block,
    Break,
    Continue,
    Dot,
    Define,
    Else,
    End,
    If,
    Nil,
    Range,
    Template,
    With,
}

impl Kind {
    fn is_keyword(self) -> bool {
        matches!(
            self,
            Kind::Block
                | Kind::Break
                | Kind::Continue
                | Kind::Dot
                | Kind::Define
                | Kind::Else
                | Kind::End
                | Kind::If
                | Kind::Nil
                | Kind::Range
                | Kind::Template
                | Kind::With
        )
    }
}

/// One token: kind, the byte span `pos..end` of its text in the source,
/// and the 1-based line where it starts. Tokens own nothing, so the
/// parser's look-ahead copies them freely; [`Tokens::val`] gives the text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub pos: u32,
    pub end: u32,
    pub line: u32,
}

/// A lexed template: the tokens, and the message of the error token that
/// ends them when lexing failed (Go's `errorf` item, whose text is not in
/// the source).
#[derive(Debug)]
pub struct Tokens<'a> {
    pub src: &'a str,
    pub toks: Vec<Token>,
    pub error: String,
}

impl<'a> Tokens<'a> {
    /// The token's span of the source: its text, except for the error
    /// token (empty; its message is [`Tokens::val`]).
    pub fn text(&self, t: &Token) -> &'a str {
        self.src
            .get(t.pos as usize..t.end as usize)
            .unwrap_or_default()
    }

    /// The token's text (Go's `item.val`).
    pub fn val(&self, t: &Token) -> &str {
        if t.kind == Kind::Error {
            return &self.error;
        }
        self.text(t)
    }

    /// Go's `item.String()`, used in "unexpected X in Y" messages.
    pub fn describe(&self, t: &Token) -> String {
        let val = self.val(t);
        match t.kind {
            Kind::Eof => "EOF".into(),
            Kind::Error => val.to_string(),
            k if k.is_keyword() => format!("<{val}>"),
            _ if val.chars().count() > 10 => {
                let short: String = val.chars().take(10).collect();
                format!("{}...", crate::gotmpl::fmt::quote(&short))
            }
            _ => crate::gotmpl::fmt::quote(val),
        }
    }
}

thread_local! {
    /// The token buffer of this thread's previous parse, reused: a chart's
    /// templates are parsed one after another, and a fresh buffer each
    /// time costs page faults and `malloc_consolidate` on every file.
    static SPARE: std::cell::Cell<Vec<Token>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Token buffers larger than this (1 MiB) are freed, not kept.
const MAX_SPARE_TOKENS: usize = (1 << 20) / std::mem::size_of::<Token>();

impl Drop for Tokens<'_> {
    fn drop(&mut self) {
        if self.toks.capacity() <= MAX_SPARE_TOKENS {
            let mut spare = std::mem::take(&mut self.toks);
            spare.clear();
            SPARE.set(spare);
        }
    }
}

const LEFT: &str = "{{";
const RIGHT: &str = "}}";

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// text/template lex.go `isAlphaNumeric`: `_`, `unicode.IsLetter` or
/// `unicode.IsDigit` (Go's categories L and Nd: a combining vowel sign such
/// as `ि` or a letter number such as `Ⅻ` ends an identifier, where Rust's
/// `is_alphabetic`/`is_numeric` would take them).
fn is_alnum(c: char) -> bool {
    c == '_' || super::gounicode::is_letter(c) || super::gounicode::is_digit(c)
}

/// Newlines in `b`, counted in byte-wide lanes: a block of at most 255
/// bytes holds at most 255 of them, so its count fits in a byte (summed in
/// words, the compiler widened every byte first).
fn count_newlines(b: &[u8]) -> usize {
    b.chunks(255)
        .map(|c| usize::from(c.iter().fold(0u8, |n, &x| n + u8::from(x == b'\n'))))
        .sum()
}

fn is_space_byte(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// `- ` after `{{` (both ASCII, so bytes decide).
fn has_left_trim(s: &str) -> bool {
    match s.as_bytes() {
        [b'-', c, ..] => is_space_byte(*c),
        _ => false,
    }
}

/// ` -` before `}}`.
fn has_right_trim(s: &str) -> bool {
    match s.as_bytes() {
        [c, b'-', ..] => is_space_byte(*c),
        _ => false,
    }
}

/// Offset of the first `{{` in `b`: a byte search for `{` (`memchr`, many
/// bytes a step: a chart's CRDs are megabytes of text without an action),
/// then a check of the byte after it (Go's
/// `strings.Index(l.input[l.pos:], l.leftDelim)`).
fn find_left_delim(b: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(i) = memchr::memchr(b'{', b.get(from..)?) {
        let at = from + i;
        if b.get(at + 1) == Some(&b'{') {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// What the lexer does that depends on the template's function names and
/// on the Go release.
#[derive(Clone, Copy, Debug)]
pub struct LexOptions {
    /// `break` is a keyword (no function of that name).
    pub break_ok: bool,
    /// `continue` is a keyword (no function of that name).
    pub continue_ok: bool,
    /// The newlines inside a `{{/* */}}` comment count toward the line
    /// numbers of later tokens. Go 1.23's `lexComment` (helm 3.17) moves
    /// over the comment without counting them, so its parse errors after a
    /// multi-line comment name an earlier line; Go 1.24+ (helm 4) counts
    /// them.
    pub comment_newlines: bool,
}

#[cfg(test)]
impl LexOptions {
    /// Go 1.24+ with neither `break` nor `continue` defined as functions.
    pub const CURRENT: LexOptions = LexOptions {
        break_ok: true,
        continue_ok: true,
        comment_newlines: true,
    };
}

/// Tokenizes a whole template. Lexing stops at the first error token,
/// exactly where Go's lexer would stop emitting. Positions are `u32`:
/// `input` is at most `u32::MAX` bytes (`parse::parse` checks).
pub fn lex(input: &str, opts: LexOptions) -> Tokens<'_> {
    let LexOptions {
        break_ok,
        continue_ok,
        comment_newlines,
    } = opts;
    let mut l = Lexer {
        input,
        pos: 0,
        start: 0,
        line: 1,
        start_line: 1,
        paren_depth: 0,
        out: SPARE.take(),
        error: String::new(),
        break_ok,
        continue_ok,
        comment_newlines,
    };
    l.out.clear();
    // About one token per 6 bytes of chart templates.
    l.out.reserve(input.len() / 6 + 4);
    l.run();
    Tokens {
        src: input,
        toks: l.out,
        error: l.error,
    }
}

struct Lexer<'a> {
    input: &'a str,
    pos: usize,
    start: usize,
    line: usize,
    start_line: usize,
    paren_depth: i32,
    out: Vec<Token>,
    /// The message of the error token, which ends `out`.
    error: String,
    break_ok: bool,
    continue_ok: bool,
    comment_newlines: bool,
}

enum State {
    Text,
    InsideAction,
    Done,
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        &self.input[self.pos..]
    }

    #[inline]
    fn peek(&self) -> Option<char> {
        match self.input.as_bytes().get(self.pos) {
            Some(&b) if b.is_ascii() => Some(b as char),
            Some(_) => self.rest().chars().next(),
            None => None,
        }
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        if c == '\n' {
            self.line += 1;
        }
        Some(c)
    }

    fn backup(&mut self, c: Option<char>) {
        if let Some(c) = c {
            self.pos -= c.len_utf8();
            if c == '\n' {
                self.line -= 1;
            }
        }
    }

    fn emit(&mut self, kind: Kind) {
        self.out.push(Token {
            kind,
            pos: self.start as u32,
            end: self.pos as u32,
            line: self.start_line as u32,
        });
        self.ignore();
    }

    fn ignore(&mut self) {
        self.start_line = self.line;
        self.start = self.pos;
    }

    /// Moves over `n` bytes, counting newlines.
    fn skip(&mut self, n: usize) {
        let end = (self.pos + n).min(self.input.len());
        self.line += count_newlines(&self.input.as_bytes()[self.pos..end]);
        self.pos = end;
    }

    fn error(&mut self, msg: String) -> State {
        self.out.push(Token {
            kind: Kind::Error,
            pos: self.start as u32,
            end: self.start as u32,
            line: self.start_line as u32,
        });
        self.error = msg;
        State::Done
    }

    fn accept(&mut self, valid: &str) -> bool {
        match self.peek() {
            Some(c) if valid.contains(c) => {
                self.next();
                true
            }
            _ => false,
        }
    }

    fn accept_run(&mut self, valid: &str) {
        while self.accept(valid) {}
    }

    fn run(&mut self) {
        let mut state = State::Text;
        loop {
            state = match state {
                State::Text => self.lex_text(),
                State::InsideAction => self.lex_inside_action(),
                State::Done => return,
            };
        }
    }

    fn lex_text(&mut self) -> State {
        if let Some(x) = find_left_delim(self.rest().as_bytes()) {
            if x > 0 {
                let delim_at = self.pos + x;
                let mut end = delim_at;
                if has_left_trim(&self.input[delim_at + LEFT.len()..]) {
                    let kept = self.input[self.pos..delim_at].trim_end_matches(is_space);
                    end = self.pos + kept.len();
                }
                self.skip(end - self.pos);
                if self.pos > self.start {
                    self.emit(Kind::Text);
                }
                self.skip(delim_at - self.pos);
                self.ignore();
            }
            return self.lex_left_delim();
        }
        self.skip(self.input.len() - self.pos);
        if self.pos > self.start {
            self.emit(Kind::Text);
        }
        self.out.push(Token {
            kind: Kind::Eof,
            pos: self.pos as u32,
            end: self.pos as u32,
            line: self.line as u32,
        });
        State::Done
    }

    fn lex_left_delim(&mut self) -> State {
        self.pos += LEFT.len();
        let trim = has_left_trim(self.rest());
        let after = if trim { 2 } else { 0 };
        if self.rest()[after..].starts_with("/*") {
            self.skip(after);
            self.ignore();
            return self.lex_comment();
        }
        self.emit(Kind::LeftDelim);
        self.skip(after);
        self.ignore();
        self.paren_depth = 0;
        State::InsideAction
    }

    fn lex_comment(&mut self) -> State {
        self.pos += 2;
        let Some(x) = self.rest().find("*/") else {
            return self.error("unclosed comment".into());
        };
        if self.comment_newlines {
            self.skip(x + 2);
        } else {
            self.pos += x + 2;
        }
        let (delim, trim) = self.at_right_delim();
        if !delim {
            return self.error("comment ends before closing delimiter".into());
        }
        if trim {
            self.skip(2);
        }
        self.pos += RIGHT.len();
        if trim {
            self.trim_leading_space();
        }
        self.ignore();
        State::Text
    }

    fn trim_leading_space(&mut self) {
        let n = self.rest().len() - self.rest().trim_start_matches(is_space).len();
        self.skip(n);
    }

    fn at_right_delim(&self) -> (bool, bool) {
        let r = self.rest();
        if has_right_trim(r) && r[2..].starts_with(RIGHT) {
            return (true, true);
        }
        (r.starts_with(RIGHT), false)
    }

    fn lex_right_delim(&mut self) -> State {
        let (_, trim) = self.at_right_delim();
        if trim {
            self.skip(2);
            self.ignore();
        }
        self.pos += RIGHT.len();
        self.emit(Kind::RightDelim);
        if trim {
            self.trim_leading_space();
            self.ignore();
        }
        State::Text
    }

    fn lex_inside_action(&mut self) -> State {
        let (delim, _) = self.at_right_delim();
        if delim {
            if self.paren_depth == 0 {
                return self.lex_right_delim();
            }
            return self.error("unclosed left paren".into());
        }
        let c = self.next();
        match c {
            None => return self.error("unclosed action".into()),
            Some(c) if is_space(c) => {
                self.backup(Some(c));
                return self.lex_space();
            }
            Some('=') => self.emit(Kind::Assign),
            Some(':') => {
                if self.next() != Some('=') {
                    return self.error("expected :=".into());
                }
                self.emit(Kind::Declare);
            }
            Some('|') => self.emit(Kind::Pipe),
            Some('"') => return self.lex_quote(),
            Some('`') => return self.lex_raw_quote(),
            Some('$') => return self.lex_field_or_var(Kind::Variable),
            Some('\'') => return self.lex_char(),
            Some('.') if self.peek().is_some_and(|c| !c.is_ascii_digit()) => {
                return self.lex_field_or_var(Kind::Field);
            }
            Some(c) if c == '.' || c == '+' || c == '-' || c.is_ascii_digit() => {
                self.backup(Some(c));
                return self.lex_number();
            }
            Some(c) if is_alnum(c) => {
                self.backup(Some(c));
                return self.lex_identifier();
            }
            Some('(') => {
                self.emit(Kind::LeftParen);
                self.paren_depth += 1;
            }
            Some(')') => {
                self.paren_depth -= 1;
                if self.paren_depth < 0 {
                    return self.error("unexpected right paren".into());
                }
                self.emit(Kind::RightParen);
            }
            Some(c) if c.is_ascii() && !c.is_ascii_control() => self.emit(Kind::Char),
            Some(c) => {
                return self.error(format!(
                    "unrecognized character in action: {}",
                    crate::gotmpl::fmt::unicode_sharp(c)
                ))
            }
        }
        State::InsideAction
    }

    fn lex_space(&mut self) -> State {
        let mut n = 0;
        while let Some(&b) = self.input.as_bytes().get(self.pos) {
            if !is_space_byte(b) {
                break;
            }
            self.pos += 1;
            self.line += usize::from(b == b'\n');
            n += 1;
        }
        // Go: a trim-marked closing delimiter starts with a space; leave it.
        let before = &self.input[self.pos - 1..];
        if has_right_trim(before) && before[2..].starts_with(RIGHT) {
            let last = self.input[..self.pos].chars().next_back();
            self.backup(last);
            if n == 1 {
                return self.lex_right_delim();
            }
        }
        self.emit(Kind::Space);
        State::InsideAction
    }

    fn at_terminator(&self) -> bool {
        match self.peek() {
            None => true,
            Some(c) if is_space(c) => true,
            Some('.' | ',' | '|' | ':' | ')' | '(') => true,
            _ => self.rest().starts_with(RIGHT),
        }
    }

    /// Moves over letters, digits and `_` (never a newline), a byte at a
    /// time while they are ASCII.
    fn skip_alnum(&mut self) {
        let bytes = self.input.as_bytes();
        while let Some(&b) = bytes.get(self.pos) {
            if b.is_ascii_alphanumeric() || b == b'_' {
                self.pos += 1;
                continue;
            }
            if b.is_ascii() {
                return;
            }
            match self.peek() {
                Some(c) if is_alnum(c) => self.pos += c.len_utf8(),
                _ => return,
            }
        }
    }

    fn lex_identifier(&mut self) -> State {
        self.skip_alnum();
        let c = self.peek();
        if !self.at_terminator() {
            return self.bad_char(c);
        }
        let word = &self.input[self.start..self.pos];
        let kind = match word {
            "block" => Kind::Block,
            "break" if self.break_ok => Kind::Break,
            "continue" if self.continue_ok => Kind::Continue,
            "define" => Kind::Define,
            "else" => Kind::Else,
            "end" => Kind::End,
            "if" => Kind::If,
            "range" => Kind::Range,
            "nil" => Kind::Nil,
            "template" => Kind::Template,
            "with" => Kind::With,
            "true" | "false" => Kind::Bool,
            _ => Kind::Identifier,
        };
        self.emit(kind);
        State::InsideAction
    }

    fn bad_char(&mut self, c: Option<char>) -> State {
        let desc = match c {
            Some(c) => crate::gotmpl::fmt::unicode_sharp(c),
            None => "U+FFFFFFFF".into(),
        };
        self.error(format!("bad character {desc}"))
    }

    fn lex_field_or_var(&mut self, kind: Kind) -> State {
        if self.at_terminator() {
            self.emit(if kind == Kind::Variable {
                Kind::Variable
            } else {
                Kind::Dot
            });
            return State::InsideAction;
        }
        self.skip_alnum();
        let c = self.peek();
        if !self.at_terminator() {
            return self.bad_char(c);
        }
        self.emit(kind);
        State::InsideAction
    }

    fn lex_char(&mut self) -> State {
        loop {
            match self.next() {
                Some('\\') => match self.next() {
                    Some(c) if c != '\n' => {}
                    _ => return self.error("unterminated character constant".into()),
                },
                None | Some('\n') => return self.error("unterminated character constant".into()),
                Some('\'') => break,
                _ => {}
            }
        }
        self.emit(Kind::CharConstant);
        State::InsideAction
    }

    fn lex_number(&mut self) -> State {
        if !self.scan_number() {
            let text = self.input[self.start..self.pos].to_string();
            return self.error(format!(
                "bad number syntax: {}",
                crate::gotmpl::fmt::quote(&text)
            ));
        }
        if matches!(self.peek(), Some('+' | '-')) {
            // Complex: 1+2i. No spaces, must end in 'i'.
            if !self.scan_number() || !self.input[..self.pos].ends_with('i') {
                let text = self.input[self.start..self.pos].to_string();
                return self.error(format!(
                    "bad number syntax: {}",
                    crate::gotmpl::fmt::quote(&text)
                ));
            }
            self.emit(Kind::Complex);
        } else {
            self.emit(Kind::Number);
        }
        State::InsideAction
    }

    fn scan_number(&mut self) -> bool {
        self.accept("+-");
        let mut digits = "0123456789_";
        if self.accept("0") {
            if self.accept("xX") {
                digits = "0123456789abcdefABCDEF_";
            } else if self.accept("oO") {
                digits = "01234567_";
            } else if self.accept("bB") {
                digits = "01_";
            }
        }
        self.accept_run(digits);
        if self.accept(".") {
            self.accept_run(digits);
        }
        if digits.len() == 11 && self.accept("eE") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        if digits.len() == 23 && self.accept("pP") {
            self.accept("+-");
            self.accept_run("0123456789_");
        }
        self.accept("i");
        if self.peek().is_some_and(is_alnum) {
            self.next();
            return false;
        }
        true
    }

    /// Go's `lexQuote`, a byte at a time: every byte it stops at is ASCII,
    /// and bytes of multi-byte characters never equal one. The string has
    /// no newline, so the line stays.
    fn lex_quote(&mut self) -> State {
        let bytes = self.input.as_bytes();
        loop {
            match bytes.get(self.pos) {
                Some(b'\\') => {
                    self.pos += 1;
                    match self.peek() {
                        Some(c) if c != '\n' => self.pos += c.len_utf8(),
                        _ => return self.error("unterminated quoted string".into()),
                    }
                }
                None | Some(b'\n') => return self.error("unterminated quoted string".into()),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => self.pos += 1,
            }
        }
        self.emit(Kind::String);
        State::InsideAction
    }

    /// Go's `lexRawQuote`: everything up to the next backquote.
    fn lex_raw_quote(&mut self) -> State {
        let Some(n) = self.rest().find('`') else {
            return self.error("unterminated raw quoted string".into());
        };
        self.skip(n + 1);
        self.emit(Kind::RawString);
        State::InsideAction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<(Kind, String)> {
        let toks = lex(s, LexOptions::CURRENT);
        toks.toks
            .iter()
            .map(|t| (t.kind, toks.val(t).to_string()))
            .collect()
    }

    #[test]
    fn text_and_action() {
        let k = kinds("a {{ .x }} b");
        let want = vec![
            (Kind::Text, "a ".to_string()),
            (Kind::LeftDelim, "{{".into()),
            (Kind::Space, " ".into()),
            (Kind::Field, ".x".into()),
            (Kind::Space, " ".into()),
            (Kind::RightDelim, "}}".into()),
            (Kind::Text, " b".into()),
            (Kind::Eof, "".into()),
        ];
        assert_eq!(k, want);
    }

    #[test]
    fn trim_markers_drop_whitespace() {
        let k = kinds("a \n {{- 3 -}} \n b");
        assert_eq!(k[0], (Kind::Text, "a".into()));
        assert_eq!(k[1].0, Kind::LeftDelim);
        assert_eq!(k[2], (Kind::Number, "3".into()));
        assert_eq!(k[3].0, Kind::RightDelim);
        assert_eq!(k[4], (Kind::Text, "b".into()));
    }

    #[test]
    fn identifiers_are_go_letters_and_digits() {
        // Nd (Arabic-Indic ١) continues a name; a vowel sign (Mc) or a
        // letter number (Nl) ends it, as Go's isAlphaNumeric decides.
        assert_eq!(kinds("{{$a١}}")[1], (Kind::Variable, "$a١".into()));
        let bad = |src: &str, what: &str| {
            kinds(src).contains(&(Kind::Error, format!("bad character {what}")))
        };
        assert!(bad("{{$aि}}", "U+093F 'ि'"));
        assert!(bad("{{.aⅫ}}", "U+216B 'Ⅻ'"));
    }

    #[test]
    fn negative_number_is_not_trim() {
        let k = kinds("{{-3}}");
        assert_eq!(k[1], (Kind::Number, "-3".into()));
    }

    #[test]
    fn comment_with_trim() {
        let k = kinds("a {{- /* c */ -}} b");
        assert_eq!(k[0], (Kind::Text, "a".into()));
        assert_eq!(k[1], (Kind::Text, "b".into()));
    }

    #[test]
    fn line_numbers_advance() {
        let toks = lex("a\nb{{ .x\n}}\n{{ y }}", LexOptions::CURRENT);
        let y = toks
            .toks
            .iter()
            .find(|t| toks.val(t) == "y")
            .map(|t| t.line);
        assert_eq!(y, Some(4));
    }

    #[test]
    fn errors() {
        let last = |s: &str| {
            let toks = lex(s, LexOptions::CURRENT);
            toks.toks
                .last()
                .map(|t| toks.val(t).to_string())
                .unwrap_or_default()
        };
        assert_eq!(last("{{ \"abc }}"), "unterminated quoted string");
        assert_eq!(last("{{ 3x }}"), "bad number syntax: \"3x\"");
        assert_eq!(last("{{ (a }}"), "unclosed left paren");
        assert_eq!(last("{{ a"), "unclosed action");
        assert_eq!(last("{{/* a"), "unclosed comment");
    }

    /// Templates made of fragments that exercise every lexer state.
    fn template() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let frags = prop::sample::select(vec![
            "{{",
            "}}",
            "{{- ",
            " -}}",
            "{{-",
            "-}}",
            " ",
            "\n",
            "\t",
            ".a",
            ".",
            "$x",
            "$",
            ":=",
            "=",
            ",",
            "|",
            "(",
            ")",
            "\"s\\\"\"",
            "\"",
            "`r\n`",
            "`",
            "'c'",
            "'",
            "if",
            "end",
            "range",
            "true",
            "nil",
            "1",
            "-2",
            "0x1f",
            "1.5e3",
            "/*",
            "*/",
            "é",
            "x",
            "{",
            "}",
            "#",
            "\u{2028}",
        ]);
        prop::collection::vec(frags, 0..40).prop_map(|v| v.concat())
    }

    proptest::proptest! {
        /// Tokens are spans of the source in order, on character
        /// boundaries, each on the line its first byte is on; the last one
        /// is EOF or an error with a message.
        #[test]
        fn tokens_are_ordered_spans_with_their_lines(src in template()) {
            let toks = lex(&src, LexOptions::CURRENT);
            let mut prev_end = 0;
            for t in &toks.toks {
                let (pos, end) = (t.pos as usize, t.end as usize);
                proptest::prop_assert!(prev_end <= pos && pos <= end && end <= src.len());
                proptest::prop_assert!(src.is_char_boundary(pos) && src.is_char_boundary(end));
                let line = 1 + src[..pos].matches('\n').count();
                proptest::prop_assert_eq!(t.line as usize, line, "{:?}", t);
                let text = toks.text(t);
                let ok = match t.kind {
                    Kind::LeftDelim => text == "{{",
                    Kind::RightDelim => text == "}}",
                    Kind::Space => !text.is_empty() && text.chars().all(is_space),
                    Kind::Field => text.starts_with('.'),
                    Kind::Variable => text.starts_with('$'),
                    Kind::Text => !text.is_empty(),
                    Kind::Eof | Kind::Error => text.is_empty(),
                    _ => !text.is_empty(),
                };
                proptest::prop_assert!(ok, "{:?} {:?}", t, text);
                prev_end = end;
            }
            let last = toks.toks.last().map(|t| t.kind);
            proptest::prop_assert!(matches!(last, Some(Kind::Eof | Kind::Error)));
            proptest::prop_assert_eq!(last == Some(Kind::Error), !toks.error.is_empty());
            let ends = toks.toks.iter().filter(|t| matches!(t.kind, Kind::Eof | Kind::Error));
            proptest::prop_assert_eq!(ends.count(), 1);
        }
    }

    #[test]
    fn keywords_and_describe() {
        let toks = lex("{{ if }}", LexOptions::CURRENT);
        assert_eq!(toks.toks[2].kind, Kind::If);
        assert_eq!(toks.describe(&toks.toks[2]), "<if>");
        let long = lex("{{\"abcdefghijkl\"}}", LexOptions::CURRENT);
        assert_eq!(long.toks[1].kind, Kind::String);
        assert_eq!(long.describe(&long.toks[1]), "\"\\\"abcdefghi\"...");
    }
}
