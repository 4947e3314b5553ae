//! go-yaml's emitter analysis of a scalar (emitterc.go
//! `yaml_emitter_analyze_scalar`): which styles can print it.

use super::{is_blank, is_blankz, is_break, is_printable, width};

/// What analyze_scalar found out about a string.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Analysis {
    pub(super) multiline: bool,
    pub(super) flow_plain: bool,
    pub(super) block_plain: bool,
    pub(super) single_quoted: bool,
    pub(super) block: bool,
}

/// yaml_emitter_analyze_scalar.
pub(super) fn analyze(text: &str) -> Analysis {
    // The common case, a name or a number: it starts with a letter or digit
    // and has no indicator, blank, break or unprintable anywhere, so every
    // style is open (what `analyze_all` finds for it, byte by byte).
    let v = text.as_bytes();
    if v.first().is_some_and(u8::is_ascii_alphanumeric)
        && v.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.' | b'/'))
    {
        return Analysis {
            multiline: false,
            flow_plain: true,
            block_plain: true,
            single_quoted: true,
            block: true,
        };
    }
    analyze_all(text)
}

/// yaml_emitter_analyze_scalar, for any text.
pub(super) fn analyze_all(text: &str) -> Analysis {
    let v = text.as_bytes();
    if v.is_empty() {
        return Analysis {
            multiline: false,
            flow_plain: false,
            block_plain: true,
            single_quoted: true,
            block: false,
        };
    }
    let mut block_ind = false;
    let mut flow_ind = false;
    let (mut line_breaks, mut special) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut prev_space, mut prev_break) = (false, false);
    if text.starts_with("---") || text.starts_with("...") {
        block_ind = true;
        flow_ind = true;
    }
    let mut preceded_by_ws = true;
    let mut i = 0;
    while i < v.len() {
        let w = width(v[i]);
        let followed_by_ws = i + w >= v.len() || is_blank(v, i + w);
        if i == 0 {
            match v[i] {
                b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>'
                | b'\'' | b'"' | b'%' | b'@' | b'`' => {
                    flow_ind = true;
                    block_ind = true;
                }
                b'?' | b':' => {
                    flow_ind = true;
                    block_ind |= followed_by_ws;
                }
                b'-' if followed_by_ws => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        } else {
            match v[i] {
                b',' | b'?' | b'[' | b']' | b'{' | b'}' => flow_ind = true,
                b':' => {
                    flow_ind = true;
                    block_ind |= followed_by_ws;
                }
                b'#' if preceded_by_ws => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        }
        // The emitter runs with unicode output on, so only unprintables count.
        if !is_printable(v, i) {
            special = true;
        }
        if v[i] == b' ' {
            leading_space |= i == 0;
            trailing_space |= i + w == v.len();
            break_space |= prev_break;
            prev_space = true;
            prev_break = false;
        } else if is_break(v, i) {
            line_breaks = true;
            leading_break |= i == 0;
            trailing_break |= i + w == v.len();
            space_break |= prev_space;
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = is_blankz(v, i);
        i += w;
    }
    let mut a = Analysis {
        multiline: line_breaks,
        flow_plain: true,
        block_plain: true,
        single_quoted: true,
        block: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.flow_plain = false;
        a.block_plain = false;
    }
    if trailing_space {
        a.block = false;
    }
    if break_space {
        a.flow_plain = false;
        a.block_plain = false;
        a.single_quoted = false;
    }
    if space_break || special {
        a.flow_plain = false;
        a.block_plain = false;
        a.single_quoted = false;
        a.block = false;
    }
    if line_breaks {
        a.flow_plain = false;
        a.block_plain = false;
    }
    if flow_ind {
        a.flow_plain = false;
    }
    if block_ind {
        a.block_plain = false;
    }
    a
}
