//! The board as one static HTML page: inline CSS, no scripts, no external
//! assets, no glyph outside the fonts every system has (no emoji), and a
//! fixed-layout table that wraps inside the window instead of scrolling.

use super::{age, Board, Cell, Change, Version};
use crate::output::rfc3339;

const STYLE: &str = "\
:root{color-scheme:light}
body{margin:24px;color:#1f2328;background:#fff;font:14px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"Liberation Sans\",\"DejaVu Sans\",sans-serif}
h1{font-size:20px;margin:0 0 4px}
.meta{margin:0;color:#59636e}
code{font:12.5px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,\"Liberation Mono\",\"DejaVu Sans Mono\",monospace;overflow-wrap:anywhere}
table{border-collapse:collapse;width:100%;table-layout:fixed;margin:16px 0}
col.app{width:10rem}
th,td{border:1px solid #d1d9e0;padding:8px 10px;text-align:left;vertical-align:top;overflow-wrap:anywhere}
thead th{background:#f6f8fa;font-size:15px}
thead th .from{display:block;font-weight:normal;font-size:12px;color:#59636e}
tbody th,tfoot th{font-weight:600}
td .ver code{font-size:13.5px;font-weight:600}
td .ver .label{color:#59636e;margin-right:4px}
td .dig{font-size:11.5px;color:#59636e}
td .dig code{font-size:11.5px}
td .age{font-size:12px;color:#59636e}
td .rendered{border-bottom:1px dotted #59636e}
td.behind{background:#fff8c5;box-shadow:inset 4px 0 #d4a72c}
td .in{margin-top:4px;font-size:12.5px;color:#7d4e00}
td .in code{font-size:11.5px}
td .held{margin-top:4px;font-size:12.5px;color:#59636e}
td.absent{color:#818b98;background:#f6f8fa}
tfoot td{font-size:13px;background:#f6f8fa}
.legend{color:#59636e;font-size:13px}
.graph{display:grid;gap:10px;align-items:center;margin:16px 0}
.layer{display:flex;flex-direction:column;gap:10px}
.arrow{font-size:22px;color:#59636e;text-align:center}
.env{border:1px solid #d1d9e0;border-radius:6px;padding:8px 10px;background:#fff}
.env h2{font-size:15px;margin:0}
.env .from{font-size:12px;color:#59636e}
.env ul{list-style:none;margin:6px 0 0;padding:0;display:flex;flex-wrap:wrap;gap:4px}
.env li{font-size:11.5px;border:1px solid #d1d9e0;border-radius:10px;padding:0 6px;background:#f6f8fa}
.env li.closed{background:#ffebe9;border-color:#ff8182;color:#82071e}
.env li.held{background:#fff8c5;border-color:#d4a72c;color:#7d4e00}
.env li.open{background:#dafbe1;border-color:#4ac26b;color:#116329}
.env .app{margin-top:6px;font-size:13px}
.env .app code{font-weight:600}
.env .app .age,.env .app .held{font-size:12px;color:#59636e}
.env .app .in{font-size:12px;color:#7d4e00}
.key{display:inline-block;width:12px;height:12px;vertical-align:-1px;background:#fff8c5;box-shadow:inset 3px 0 #d4a72c;border:1px solid #d1d9e0}
";

/// Escaped for HTML text and attributes; characters outside ASCII as
/// numeric references, so the page is ASCII whatever the names hold.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c if c.is_ascii() => out.push(c),
            c => out.push_str(&format!("&#x{:x};", u32::from(c))),
        }
    }
    out
}

fn short_sha(sha: &str) -> String {
    sha.chars().take(12).collect()
}

/// One version: the tag on one line, the digest (cut, whole in the
/// tooltip) under it.
fn version(v: &Version) -> String {
    let label = v
        .label
        .as_deref()
        .map(|l| format!("<span class=\"label\">{}</span>", esc(l)))
        .unwrap_or_default();
    let rendered = if v.rendered {
        " class=\"rendered\" title=\"read from the rendered manifests: no pin sets it\""
    } else {
        ""
    };
    let digest = |d: &str| {
        format!(
            "<code title=\"{}\"{rendered}>{}</code>",
            esc(d),
            esc(&super::super::message::short(d))
        )
    };
    match (&v.tag, &v.digest) {
        (Some(t), Some(d)) => format!(
            "<div class=\"ver\">{label}<code{rendered}>{}</code></div><div class=\"dig\">@{}</div>",
            esc(t),
            digest(d)
        ),
        (Some(t), None) => format!(
            "<div class=\"ver\">{label}<code{rendered}>{}</code></div>",
            esc(t)
        ),
        (None, Some(d)) => format!("<div class=\"ver\">{label}{}</div>", digest(d)),
        (None, None) => format!("<div class=\"ver\">{label}<code>-</code></div>"),
    }
}

/// `policy \`redis\``: escaped, with back-quoted names as code.
fn with_code(text: &str) -> String {
    text.split('`')
        .enumerate()
        .map(|(i, part)| match i % 2 {
            1 => format!("<code>{}</code>", esc(part)),
            _ => esc(part),
        })
        .collect()
}

fn cell(c: &Option<Cell>, now: i64) -> String {
    let Some(c) = c else {
        return "<td class=\"absent\">not deployed</td>".into();
    };
    let behind = c.incoming.iter().any(|i| i.held.is_none());
    let mut out = String::from(if behind {
        "<td class=\"behind\">"
    } else {
        "<td>"
    });
    for v in &c.versions {
        out.push_str(&version(v));
    }
    if let Some(t) = c.since {
        let a = match age(t, now).as_str() {
            "now" => "since just now".to_string(),
            a => format!("for {a}"),
        };
        out.push_str(&format!(
            "<div class=\"age\" title=\"since {}\">{a}</div>",
            rfc3339(t)
        ));
    }
    for i in &c.incoming {
        let theirs: Vec<String> = i.versions.iter().map(Version::short).collect();
        let theirs = esc(&theirs.join(", "));
        match &i.held {
            None => out.push_str(&format!(
                "<div class=\"in\" title=\"{from} has {theirs}: hydrate promote {from} brings it\">&larr; {from} <code>{theirs}</code></div>",
                from = esc(&i.from),
            )),
            Some(why) => out.push_str(&format!(
                "<div class=\"held\" title=\"{from} has {theirs}\">held: {}</div>",
                with_code(why),
                from = esc(&i.from),
            )),
        }
    }
    out.push_str("</td>");
    out
}

fn change(c: &Option<Change>, now: i64) -> String {
    let Some(c) = c else {
        return "<td>none recorded</td>".into();
    };
    let what = match &c.from {
        Some(f) => format!("{} from {}", c.kind.name(), esc(f)),
        None => c.kind.name().to_string(),
    };
    let when = match age(c.time, now).as_str() {
        "now" => "just now".to_string(),
        a => format!("{a} ago"),
    };
    let merged = c
        .merged_by
        .as_deref()
        .map(|m| format!(", merged in <code title=\"{m}\">{}</code>", short_sha(m)))
        .unwrap_or_default();
    format!(
        "<td>{what}<br><span title=\"{}\">{when}</span> &middot; <code title=\"{}\">{}</code>{merged}</td>",
        rfc3339(c.time),
        esc(&c.sha),
        short_sha(&c.sha)
    )
}

impl Board {
    /// The environments laid out by the promotion graph: one column per
    /// depth, each environment a box with its gates, its apps' versions,
    /// how long they have been there and what holds the next one. A plain
    /// chain reads as well in the table's columns (promotion order), so the
    /// graph is drawn only where it branches.
    fn html_graph(&self) -> String {
        let n = self.layers.len();
        if n < 2 || self.layers.iter().all(|l| l.len() < 2) {
            return String::new();
        }
        let template = vec!["minmax(0,1fr)"; n].join(" auto ");
        let mut out =
            format!("<section class=\"graph\" style=\"grid-template-columns:{template}\">\n");
        for (d, layer) in self.layers.iter().enumerate() {
            if d > 0 {
                out.push_str("<div class=\"arrow\">&rarr;</div>\n");
            }
            out.push_str("<div class=\"layer\">\n");
            for name in layer {
                let Some(i) = self.columns.iter().position(|c| &c.name == name) else {
                    continue;
                };
                out.push_str(&self.env_box(i));
            }
            out.push_str("</div>\n");
        }
        out.push_str("</section>\n");
        out
    }

    fn env_box(&self, i: usize) -> String {
        let c = &self.columns[i];
        let mut out = format!("<div class=\"env\"><h2>{}</h2>", esc(&c.name));
        if !c.from.is_empty() {
            out.push_str(&format!(
                "<div class=\"from\">from {}</div>",
                esc(&c.from.join(", "))
            ));
        }
        if !c.gates.is_empty() {
            out.push_str("<ul>");
            for g in &c.gates {
                let held: Vec<String> = g.holds.iter().map(|(a, w)| format!("{a}: {w}")).collect();
                match &g.closed {
                    Some(until) => out.push_str(&format!(
                        "<li class=\"closed\">{} &middot; closed until {}</li>",
                        esc(&g.text),
                        esc(until)
                    )),
                    None if held.is_empty() => out.push_str(&format!(
                        "<li class=\"open\">{} &middot; open</li>",
                        esc(&g.text)
                    )),
                    None => out.push_str(&format!(
                        "<li class=\"held\" title=\"{}\">{} &middot; held</li>",
                        esc(&held.join("; ")),
                        esc(&g.text)
                    )),
                }
            }
            out.push_str("</ul>");
        }
        for a in &self.apps {
            let Some(cell) = &a.cells[i] else { continue };
            let versions: Vec<String> = cell.versions.iter().map(Version::short).collect();
            out.push_str(&format!(
                "<div class=\"app\">{} <code>{}</code>",
                esc(&a.app),
                esc(&versions.join(", "))
            ));
            if let Some(t) = cell.since {
                out.push_str(&format!(
                    " <span class=\"age\">for {}</span>",
                    age(t, self.generated)
                ));
            }
            for inc in &cell.incoming {
                let theirs: Vec<String> = inc.versions.iter().map(Version::short).collect();
                match &inc.held {
                    None => out.push_str(&format!(
                        "<div class=\"in\">&larr; {} <code>{}</code> ready</div>",
                        esc(&inc.from),
                        esc(&theirs.join(", "))
                    )),
                    Some(why) => out.push_str(&format!(
                        "<div class=\"held\">{} <code>{}</code> held: {}</div>",
                        esc(&inc.from),
                        esc(&theirs.join(", ")),
                        with_code(why)
                    )),
                }
            }
            out.push_str("</div>");
        }
        out.push_str("</div>\n");
        out
    }

    fn html_heading(&self) -> String {
        let name = self
            .repository
            .as_ref()
            .map_or("(no repository)".to_string(), |r| r.name.clone());
        let url = self
            .repository
            .as_ref()
            .and_then(|r| r.url.as_deref())
            .map(|u| format!(" <span>({})</span>", esc(u)))
            .unwrap_or_default();
        let commit = match &self.commit {
            Some(c) => format!("commit <code title=\"{}\">{}</code>", esc(c), short_sha(c)),
            None => "no commit".into(),
        };
        let when = rfc3339(self.generated);
        format!(
            "<h1>{} &middot; environments</h1>\n<p class=\"meta\">Repository <b>{}</b>{url} &middot; {commit} &middot; generated <time datetime=\"{when}\">{}</time></p>\n",
            esc(&name),
            esc(&name),
            when.replace('T', " ").replace('Z', " UTC"),
        )
    }

    /// One static HTML page: inline CSS, no scripts, no external assets.
    pub fn html(&self) -> String {
        let title = self
            .repository
            .as_ref()
            .map_or("environments".to_string(), |r| {
                format!("{}: environments", r.name)
            });
        let mut out = format!(
            "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
            esc(&title)
        );
        out.push_str(&self.html_heading());
        out.push_str(&self.html_graph());
        out.push_str("<table>\n<colgroup><col class=\"app\">");
        out.push_str(&"<col>".repeat(self.columns.len()));
        out.push_str("</colgroup>\n<thead><tr><th>app</th>");
        for c in &self.columns {
            let from = if c.from.is_empty() {
                String::new()
            } else {
                format!(
                    "<span class=\"from\">from {}</span>",
                    esc(&c.from.join(", "))
                )
            };
            out.push_str(&format!("<th>{}{from}</th>", esc(&c.name)));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for a in &self.apps {
            out.push_str(&format!("<tr><th scope=\"row\">{}</th>", esc(&a.app)));
            for c in &a.cells {
                out.push_str(&cell(c, self.generated));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n<tfoot><tr><th scope=\"row\">last change</th>");
        for c in &self.columns {
            out.push_str(&change(&c.last_change, self.generated));
        }
        out.push_str("</tr></tfoot>\n</table>\n");
        out.push_str("<p class=\"legend\"><span class=\"key\"></span> &larr; ENV: the environment that promotes into this one has a newer version; <code>hydrate promote ENV</code> brings it. Held: a policy of this environment keeps it back. Ages count from the commit that set the version.</p>\n</body>\n</html>\n");
        out
    }
}
