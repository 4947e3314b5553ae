//! `hydrate pins`, the environments board, on the demo after `promote dev
//! staging`: environments in promotion order, one row per app with the
//! version, its age and what awaits promotion, the repository, commit and
//! generation time, the last change per environment; an HTML page that is
//! self-contained and fits a 1280 px window in Chromium.

use std::path::Path;

use crate::support::{demo_copy, git, hydrate, need, Need};

/// When the demo is set up and promoted.
const THEN: &str = "1700000000";
/// When the board is made: three days later.
const NOW: &str = "1700259200";

/// The demo as a git repository with an `origin`, after `hydrate promote
/// dev staging` (committed at [`THEN`]).
fn promoted_demo() -> tempfile::TempDir {
    let dir = demo_copy();
    let d = dir.path();
    git(d, &["init", "-q", "-b", "main"]);
    git(
        d,
        &[
            "remote",
            "add",
            "origin",
            "https://git.example.com/acme/shop.git",
        ],
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "Add the demo"]);
    let o = pins(d, THEN, &["promote", "dev", "staging"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

/// `hydrate ARGS --root DIR` with the clock at `now`.
fn pins(dir: &Path, now: &str, args: &[&str]) -> std::process::Output {
    hydrate()
        .args(args)
        .arg("--root")
        .arg(dir)
        .env("HYDRATE_AUTHOR", "CI Bot <ci@example.com>")
        .env("HYDRATE_TIMESTAMP", now)
        .output()
        .expect("hydrate runs")
}

/// The board's stdout, with HEAD's commit (which the test's own commit
/// dates make vary) written `<HEAD>`.
fn board(dir: &Path, args: &[&str]) -> String {
    let o = pins(dir, NOW, args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let head = git(dir, &["rev-parse", "HEAD"]);
    String::from_utf8(o.stdout)
        .unwrap()
        .replace(&head, "<HEAD>")
        .replace(&head[..12], "<HEAD>")
}

#[test]
fn pins_board_is_in_promotion_order_with_versions_ages_and_last_changes() {
    let repo = promoted_demo();
    let dir = repo.path();
    let text = board(dir, &["pins"]);
    insta::assert_snapshot!("pins_text", text);
    // The order given on the command line, else promotion order.
    assert_eq!(board(dir, &["pins", "dev", "staging", "production"]), text);
    let reversed = board(dir, &["pins", "production", "dev"]);
    let header = reversed.lines().nth(2).unwrap_or_default();
    assert!(header.starts_with("APP      PRODUCTION"), "{reversed}");
    insta::assert_snapshot!(
        "pins_markdown",
        board(dir, &["pins", "--output", "markdown"])
    );
    let json: serde_json::Value =
        serde_json::from_str(&board(dir, &["pins", "--output", "json"])).unwrap();
    assert_eq!(json["repository"]["name"], "shop");
    assert_eq!(json["generated"], "2023-11-17T22:13:20Z");
    assert_eq!(json["environments"][1]["lastChange"]["kind"], "promotion");
    assert_eq!(json["environments"][1]["lastChange"]["from"], "dev");
    let worker = &json["apps"][4]["environments"]["production"]["versions"][0];
    assert_eq!(
        (&worker["tag"], &worker["rendered"]),
        (&"0.9.3".into(), &true.into())
    );
    // The chart path is not on the board, but JSON lists every pin.
    assert!(!text.contains("testdata/apps/status/chart"));
    let pins = json["pins"].as_array().unwrap();
    assert!(pins.iter().any(|p| p["pin"] == "chart"), "{json}");
}

#[test]
fn pins_board_html_is_one_self_contained_file() {
    let repo = promoted_demo();
    let html = board(repo.path(), &["pins", "--output", "html"]);
    assert!(html.starts_with("<!doctype html>") && html.ends_with("</html>\n"));
    let lower = html.to_lowercase();
    for external in [
        "<script", "<link", "<img", "src=", "href=", "url(", "@import",
    ] {
        assert!(!lower.contains(external), "{external} in {html}");
    }
    // No glyph that needs an emoji font: the page is ASCII, its arrows
    // and dots entities of characters every font has.
    assert!(html.is_ascii(), "{html}");
    // A digest is cut to 12 hex digits, whole in its tooltip.
    let digest = "sha256:0c1d2e3f405162738495a6b7c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091";
    assert!(
        html.contains(&format!(
            "<code title=\"{digest}\">sha256:0c1d2e3f4051</code>"
        )),
        "{html}"
    );
    assert!(!html.contains(&format!(">{digest}<")));
    assert!(html.contains("&larr; staging"), "{html}");
    assert!(html.contains("shop") && html.contains("commit <code title=\"<HEAD>\">"));
}

/// The width of `png`'s image, from its IHDR chunk.
pub(crate) fn png_width(png: &[u8]) -> u32 {
    assert_eq!(png.get(..8), Some(&b"\x89PNG\r\n\x1a\n"[..]), "not a PNG");
    let w: [u8; 4] = png[16..20].try_into().unwrap();
    u32::from_be_bytes(w)
}

/// Headless Chromium at a 1280 × 900 window on `page`, with `what`
/// (`--screenshot=…` or `--dump-dom`).
pub(crate) fn chromium(bin: &Path, page: &Path, what: &str) -> std::process::Output {
    let profile = tempfile::tempdir().unwrap();
    std::process::Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1280,900",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(what)
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs")
}

#[test]
#[cfg_attr(
    not(has_chromium),
    ignore = "needs chromium on PATH (Debian: apt-get install chromium)"
)]
fn pins_board_fits_a_1280_px_window_in_chromium() {
    let bin = need(Need::Chromium);
    let repo = promoted_demo();
    let o = pins(repo.path(), NOW, &["pins", "--output", "html"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let html = String::from_utf8(o.stdout).unwrap();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pins-board");
    std::fs::create_dir_all(&out).unwrap();
    let page = out.join("board.html");
    std::fs::write(&page, &html).unwrap();
    let shot = out.join("board-1280.png");
    let o = chromium(&bin, &page, &format!("--screenshot={}", shot.display()));
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let width = png_width(&std::fs::read(&shot).unwrap());
    // The page measures itself: the document's scroll width against the
    // window's (a probe script added to a copy; the board has none).
    let probe = out.join("probe.html");
    let script = "<script>document.body.dataset.width = document.documentElement.scrollWidth + ' ' + document.documentElement.clientWidth</script></body>";
    std::fs::write(&probe, html.replace("</body>", script)).unwrap();
    let o = chromium(&bin, &probe, "--dump-dom");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let dom = String::from_utf8_lossy(&o.stdout);
    let measured = dom
        .split("data-width=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .unwrap_or_else(|| panic!("no measurement in {dom}"));
    let (scroll, client) = measured.split_once(' ').unwrap();
    let (scroll, client): (u32, u32) = (scroll.parse().unwrap(), client.parse().unwrap());
    crate::support::report(&format!(
        "pins board in chromium: screenshot {width} px wide ({}), document scrollWidth {scroll} px, window clientWidth {client} px",
        shot.display()
    ));
    assert_eq!(width, 1280);
    assert_eq!(client, 1280, "{measured}");
    assert!(scroll <= client, "horizontal scroll: {measured}");
}

/// The last change of any kind: a bump, a rollback, a promotion merged
/// from its branch (dated by the merge, which also dates the versions it
/// brought).
#[test]
fn pins_board_last_change_is_any_kind_and_merges_count() {
    let repo = promoted_demo();
    let dir = repo.path();
    let ok = |o: std::process::Output| {
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    ok(pins(
        dir,
        THEN,
        &["promote", "staging", "production", "--branch"],
    ));
    let branch = git(
        dir,
        &["branch", "--list", "promote/*", "--format=%(refname:short)"],
    );
    let merge_date = "1700172800 +0000"; // a day after THEN
    let merged = std::process::Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=Dev", "-c", "user.email=dev@example.com"])
        .args(["merge", "-q", "--no-ff", "-m", "Merge promotion", &branch])
        .env("GIT_AUTHOR_DATE", merge_date)
        .env("GIT_COMMITTER_DATE", merge_date)
        .status()
        .unwrap();
    assert!(merged.success());
    let web = "ghcr.io/acme-shop/web=ghcr.io/acme-shop/web:1.6.0";
    ok(pins(dir, THEN, &["set-image", "dev", web]));
    ok(pins(dir, THEN, &["set-image", "staging", web]));
    ok(pins(dir, THEN, &["rollback", "staging"]));
    let json: serde_json::Value =
        serde_json::from_str(&board(dir, &["pins", "--output", "json"])).unwrap();
    let last = |i: usize| &json["environments"][i]["lastChange"];
    assert_eq!(last(0)["kind"], "set-image");
    assert_eq!(last(1)["kind"], "rollback");
    assert_eq!(last(2)["kind"], "promotion");
    assert_eq!(last(2)["from"], "staging");
    let merge = git(dir, &["log", "--merges", "-1", "--format=%H"]);
    assert_eq!(last(2)["mergedBy"], merge.as_str());
    assert_eq!(last(2)["date"], "2023-11-16T22:13:20Z");
    let text = board(dir, &["pins"]);
    let web_row = text
        .lines()
        .find(|l| l.starts_with("web "))
        .unwrap_or_default();
    assert_eq!(
        web_row.split_whitespace().collect::<Vec<_>>(),
        [
            "web",
            "1.6.0",
            "(3",
            "days)",
            "1.5.0-rc.1",
            "(3",
            "days)",
            "←",
            "dev",
            "1.5.0-rc.1",
            "(1",
            "day)"
        ],
        "{text}"
    );
    let merged_in = format!(
        "promotion from staging, 1 day ago ({}, merged in {})",
        &last(2)["commit"].as_str().unwrap_or_default()[..12],
        &merge[..12]
    );
    assert!(text.contains(&merged_in), "{text}");
}
