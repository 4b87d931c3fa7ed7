//! The results site of the demo contest, opened in headless Chromium (Debian's `chromium`
//! package; CI installs it): the podiums, a tool page and a comparison chart render, no page
//! logs anything to the console, every local link resolves. Screenshots are saved under
//! target/report-screenshots/ for a person to look at.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;

/// Loads a page headless; returns the DOM after loading and the console lines Chromium logged.
fn open(chromium: &Path, page: &Path, screenshot: Option<&Path>) -> (String, Vec<String>) {
    open_with(
        chromium,
        &format!("file://{}", page.display()),
        screenshot,
        true,
    )
}

/// [`open`] of a URL, with JavaScript on or off.
fn open_with(
    chromium: &Path,
    url: &str,
    screenshot: Option<&Path>,
    javascript: bool,
) -> (String, Vec<String>) {
    let mut cmd = Command::new(chromium);
    if !javascript {
        cmd.arg("--disable-javascript");
    }
    cmd.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
        "--window-size=1300,1500",
    ]);
    match screenshot {
        Some(png) => cmd.arg(format!("--screenshot={}", png.display())),
        None => cmd.arg("--dump-dom"),
    };
    let out = cmd.arg(url).output().expect("chromium starts");
    let console = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(String::from)
        .collect();
    (String::from_utf8_lossy(&out.stdout).into_owned(), console)
}

/// Pixels of a screenshot close to an RGB colour.
fn pixels_of(png: &Path, rgb: [u8; 3]) -> usize {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png).expect("screenshot written"),
    ));
    let mut reader = decoder.read_info().expect("a PNG");
    let mut buf = vec![0; reader.output_buffer_size().expect("size")];
    let info = reader.next_frame(&mut buf).expect("a frame");
    let channels = info.color_type.samples();
    buf[..info.buffer_size()]
        .chunks(channels)
        .filter(|p| p.len() >= 3 && (0..3).all(|i| (p[i] as i32 - rgb[i] as i32).abs() <= 6))
        .count()
}

/// Every `href="..."` and `src="..."` of a page that points at a local file.
fn local_links(html: &str) -> Vec<String> {
    let mut links = Vec::new();
    for attr in ["href=\"", "src=\""] {
        for (i, _) in html.match_indices(attr) {
            let rest = &html[i + attr.len()..];
            let link = &rest[..rest.find('"').unwrap_or(0)];
            if !link.is_empty()
                && !link.contains("://")
                && !link.starts_with('#')
                && !link.starts_with("data:")
            {
                links.push(link.split('#').next().unwrap_or("").to_string());
            }
        }
    }
    links
}

/// Chromium, and the demo contest's site built in a temporary folder by `mccbuild report --out
/// SITE EXTRA...` with the report's output (the demo's results are cached after the first `run`;
/// the demo suite shares them). None when Chromium is missing (skipped, or a failure in CI).
fn demo_site_for_chromium(extra: &[&str]) -> Option<(PathBuf, tempfile::TempDir, Output)> {
    let Some(chromium) = chromium() else {
        skip("chromium is not installed (apt install chromium)");
        return None;
    };
    let repo = Path::new(REPO);
    let run = mccbuild_in(repo, &["run", "--json"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let site = tempfile::tempdir().unwrap();
    let args = [
        &["report", "--out", site.path().to_str().unwrap()][..],
        extra,
    ]
    .concat();
    let out = mccbuild_in(repo, &args);
    assert!(out.status.success(), "{}", stderr(&out));
    Some((chromium, site, out))
}

#[test]
fn the_demo_site_renders_in_chromium_without_console_errors() {
    let Some((chromium, site, out)) = demo_site_for_chromium(&["--exports", "--json"]) else {
        return;
    };
    let repo = Path::new(REPO);
    let summary = json(&out);
    assert!(
        summary["pages"].as_u64().unwrap() > 10 && summary["charts"].as_u64().unwrap() > 0,
        "{summary}"
    );

    // The check can fail: a page that logs to the console is caught.
    let bad = site.path().join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><p>x</p><script>console.error('boom')</script>",
    )
    .unwrap();
    let (_, console) = open(&chromium, &bad, None);
    assert!(
        console.iter().any(|l| l.contains("boom")),
        "console lines are read: {console:?}"
    );
    std::fs::remove_file(&bad).unwrap();

    // Every page: loads without console output; every local link resolves.
    for entry in std::fs::read_dir(site.path()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "html") {
            let text = std::fs::read_to_string(&path).unwrap();
            for link in local_links(&text) {
                assert!(
                    site.path().join(&link).is_file(),
                    "{}: broken link {link}",
                    path.display()
                );
            }
        }
    }
    let shots = repo.join("target/report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let pages = [
        ("index.html", "podiums"),
        ("tool-0-explorer.html", "tool"),
        ("charts-0-StateSpace.html", "chart"),
    ];
    for (page, what) in pages {
        let path = site.path().join(page);
        let (dom, console) = open(&chromium, &path, None);
        assert!(
            console.is_empty(),
            "{page} logs to the console: {console:?}"
        );
        match what {
            "podiums" => {
                assert!(
                    dom.contains("<h2>StateSpace</h2>") && dom.contains("class=\"podium\""),
                    "{dom}"
                );
                assert!(
                    dom.contains("<tr class=\"gold\">") && dom.contains("explorer"),
                    "a gold medal row"
                );
                assert!(dom.contains("Fastest tool"), "awards");
            }
            "tool" => {
                assert!(
                    dom.contains("<h1>explorer</h1>") && dom.contains("Confidence (E-2.2)"),
                    "{dom}"
                );
                assert!(dom.contains("Per examination") && dom.contains("StateSpace"));
            }
            _ => {
                // The cactus plot and the three tool-against-tool charts, with their points.
                assert_eq!(
                    dom.matches("class=\"chart scatter\"").count(),
                    3,
                    "3 tools, 3 pairs"
                );
                assert!(
                    dom.contains("class=\"chart cactus\"") && dom.contains("class=\"agree\""),
                    "{dom}"
                );
            }
        }
        let png = shots.join(page.replace(".html", ".png"));
        let (_, console) = open(&chromium, &path, Some(&png));
        assert!(console.is_empty(), "{console:?}");
        // Rendered, not just present: the podium's gold rows and the charts' blue points are
        // on the screenshot.
        match what {
            "podiums" => assert!(
                pixels_of(&png, [0xf7, 0xe2, 0x7e]) > 500,
                "gold rows drawn ({})",
                png.display()
            ),
            "chart" => assert!(
                pixels_of(&png, [0x1f, 0x5f, 0xa8]) > 20,
                "points drawn ({})",
                png.display()
            ),
            _ => assert!(
                pixels_of(&png, [0x1f, 0x3b, 0x5a]) > 1000,
                "page drawn ({})",
                png.display()
            ),
        }
        eprintln!("screenshot: {}", png.display());
    }
}

/// `report` run under `umask 077` (a private default: the site's modes must not come from it).
fn report_private_umask(contest: &Path, site: &Path) -> std::process::Output {
    let out = Command::new("sh")
        .arg("-c")
        .arg("umask 077 && exec \"$0\" report --exports --out \"$1\"")
        .arg(env!("CARGO_BIN_EXE_mccbuild"))
        .arg(site)
        .current_dir(contest)
        .env_remove("MCCBUILD_SANDBOX")
        .output()
        .expect("mccbuild runs");
    assert!(out.status.success(), "{}", stderr(&out));
    out
}

#[test]
fn the_demo_site_is_publishable_as_it_is() {
    let repo = Path::new(REPO);
    let run = mccbuild_in(repo, &["run", "--json"]);
    assert!(run.status.success(), "{}", stderr(&run));
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (site_a, site_b) = (a.path().join("site"), b.path().join("site"));
    report_private_umask(repo, &site_a);
    report_private_umask(repo, &site_b);
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    assert_publishable(
        &site_a,
        &[repo, &site_a, &repo.join("cache"), Path::new(&home)],
    );
    // The same store, the same bytes, file for file.
    let files = files_under(&site_a);
    assert_eq!(files, files_under(&site_b));
    for file in &files {
        assert!(
            std::fs::read(site_a.join(file)).unwrap() == std::fs::read(site_b.join(file)).unwrap(),
            "{} differs between two reports of one store",
            file.display()
        );
    }
}

#[test]
fn the_setup_block_states_the_records_facts() {
    let mut c = TestContest::new();
    c.copy_demo_instance("Deadlock-PT-1");
    c.model("Deadlock", "known", &["models/Deadlock-PT-1"]);
    let versioned = c.scripted_tool("alpha", "examinations = [\"StateSpace\"]");
    std::fs::write(
        versioned.join("VERSION"),
        "alpha 1.2.3 (build 7)\nsecond line\n",
    )
    .unwrap();
    c.scripted_tool("beta", "examinations = [\"StateSpace\"]");
    let ss = "STATE_SPACE STATES 3 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 2 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_IN_PLACE 1 TECHNIQUES EXPLICIT\nSTATE_SPACE MAX_TOKEN_PER_MARKING 2 TECHNIQUES EXPLICIT\n";
    c.answer("alpha", "Deadlock-PT-1", "StateSpace", ss);
    c.answer("beta", "Deadlock-PT-1", "StateSpace", ss);
    c.write("time_s = 30\nmemory_mb = 512\ntime = \"wall\"");
    let out = c.mccbuild(&["run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = c.mccbuild(&["report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let index = std::fs::read_to_string(c.path().join("report/index.html")).unwrap();
    let setup = &index[index.find("id=\"setup\"").expect("a setup block")..];
    let records = c.records();
    assert_eq!(records.len(), 2);
    let field = |r: &serde_json::Value, k: &str| r[k].as_str().unwrap().to_string();
    let first = records
        .iter()
        .map(|r| field(r, "started_at"))
        .min()
        .unwrap();
    let last = records
        .iter()
        .map(|r| field(r, "finished_at"))
        .max()
        .unwrap();
    assert!(setup.contains(&format!("<td>{first}</td>")), "{setup}");
    assert!(setup.contains(&format!("<td>{last}</td>")), "{setup}");
    for r in &records {
        let m = &r["machine"];
        let machine = format!(
            "{}, {} CPU{}, {} MB, Linux {}",
            m["cpu_model"].as_str().unwrap(),
            m["cpus"],
            if m["cpus"] == 1 { "" } else { "s" },
            m["memory_mb"],
            m["kernel"].as_str().unwrap()
        );
        assert!(m["cpus"].as_u64().unwrap() >= 1, "{r}");
        assert!(
            setup.contains(&format!("machine {}", field(r, "host"))),
            "{setup}"
        );
        assert!(setup.contains(&machine), "{machine} in {setup}");
        assert!(
            setup.contains(&format!(
                "this report: {}; the records: {}",
                env!("CARGO_PKG_VERSION"),
                field(r, "mccbuild_version")
            )),
            "{setup}"
        );
        let executor: Vec<String> = r["executor"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k}={}", v.as_str().unwrap()))
            .collect();
        assert!(setup.contains(&executor.join(", ")), "{setup}");
    }
    assert!(setup.contains("30 s of wall-clock time, 512 MB"), "{setup}");
    assert!(setup.contains("version: alpha 1.2.3 (build 7)"), "{setup}");
    assert!(setup.contains("version: none given"), "{setup}");
    assert!(setup.contains("the vote (E-3.1)"), "{setup}");
    // Every page's footer states the limits and links the whole setup.
    let tool = std::fs::read_to_string(c.path().join("report/tool-1-beta.html")).unwrap();
    assert!(
        tool.contains("limits: 30 s of wall-clock time, 512 MB")
            && tool.contains("href=\"index.html#setup\""),
        "{tool}"
    );
}

/// The cells of each row of the table with class `class` (tags stripped), header row left out.
fn table_rows(html: &str, class: &str) -> Vec<Vec<String>> {
    let start = html
        .find(&format!("<table class=\"{class}\""))
        .expect("the table");
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    let strip = |s: &str| {
        let mut out = String::new();
        let mut in_tag = false;
        for ch in s.chars() {
            match ch {
                '<' => in_tag = true,
                '>' => in_tag = false,
                c if !in_tag => out.push(c),
                _ => {}
            }
        }
        out
    };
    table
        .split("<tr")
        .skip(2)
        .map(|row| {
            row.split("<td")
                .skip(1)
                .map(|cell| strip(&format!("<td{}", &cell[..cell.find("</td>").unwrap()])))
                .collect()
        })
        .collect()
}

/// The disputes' hand scenario, run and reported (its arithmetic in
/// `the_disputes_page_lists_exactly_the_contested_and_decided_values`).
fn disputed_contest() -> TestContest {
    // Three tools on StateSpace of one instance (4 values):
    //   a: STATES 10, TRANSITIONS 20, MAX_TOKEN_IN_PLACE 1, MAX_TOKEN_PER_MARKING 3
    //   b: STATES 10, TRANSITIONS 21, MAX_TOKEN_IN_PLACE 1, MAX_TOKEN_PER_MARKING 3
    //   c: STATES 11, (no TRANSITIONS), MAX_TOKEN_IN_PLACE 1, MAX_TOKEN_PER_MARKING 3
    // Contested: STATES (10, 10, 11) and TRANSITIONS (20, 21). The organisers decide STATES = 11
    // and MAX_TOKEN_PER_MARKING = 4 (uncontested, listed because they decided it).
    // E-2.2: V = {MAX_TOKEN_IN_PLACE 1, MAX_TOKEN_PER_MARKING 3} (at least three tools agree,
    // a strict majority; STATES has two agreeing): Confidence 2/2 for all three. STATES: the
    // weighted majority 10 (a + b against c) before the organisers' 11; TRANSITIONS: two
    // tools, equal Confidence: unknown (E-3.1, third situation).
    // Stakes (E-4.1, 16 points over 4 values: ScoreValue 4, PenaltyValue 8): three tools
    // answered STATES and MAX_TOKEN_PER_MARKING: 3 x 12 = 36; two TRANSITIONS: 24.
    let mut c = TestContest::new();
    c.copy_demo_instance("Deadlock-PT-1");
    c.model("Deadlock", "known", &["models/Deadlock-PT-1"]);
    let line = |id: &str, v: &str| format!("STATE_SPACE {id} {v} TECHNIQUES EXPLICIT\n");
    for (tool, states, transitions) in [
        ("a", "10", Some("20")),
        ("b", "10", Some("21")),
        ("c", "11", None),
    ] {
        c.scripted_tool(tool, "examinations = [\"StateSpace\"]");
        let mut out = line("STATES", states);
        if let Some(t) = transitions {
            out += &line("TRANSITIONS", t);
        }
        out += &line("MAX_TOKEN_IN_PLACE", "1");
        out += &line("MAX_TOKEN_PER_MARKING", "3");
        c.answer(tool, "Deadlock-PT-1", "StateSpace", &out);
    }
    c.write("time_s = 30\nmemory_mb = 512");
    let manifest = c.path().join("contest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replacen(
            "[contest]\n",
            "[contest]\ncorrections = \"corrections.csv\"\n",
            1,
        ),
    )
    .unwrap();
    std::fs::write(
        c.path().join("corrections.csv"),
        "instance,examination,id,value\nDeadlock-PT-1,StateSpace,STATES,11\nDeadlock-PT-1,StateSpace,MAX_TOKEN_PER_MARKING,4\n",
    )
    .unwrap();
    let out = c.mccbuild(&["run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = c.mccbuild(&["report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    c
}

#[test]
fn the_disputes_page_lists_exactly_the_contested_and_decided_values() {
    let c = disputed_contest();
    let page = std::fs::read_to_string(c.path().join("report/disputes.html")).unwrap();
    let rows = table_rows(&page, "data disputes");
    // (stake, id, decision, decided by) of each row, in the page's order.
    let got: Vec<(String, String, String, String)> = rows
        .iter()
        .map(|r| (r[0].clone(), r[3].clone(), r[5].clone(), r[6].clone()))
        .collect();
    let want = [
        (
            "36.00",
            "MAX_TOKEN_PER_MARKING",
            "4",
            "the organisers (E-6.3)without them: 3 (unanimity)",
        ),
        (
            "36.00",
            "STATES",
            "11",
            "the organisers (E-6.3)without them: 10 (weighted-majority)",
        ),
        ("24.00", "TRANSITIONS", "unknown", "two-tools (E-3.1)"),
    ];
    let want: Vec<(String, String, String, String)> = want
        .iter()
        .map(|(a, b, c, d)| (a.to_string(), b.to_string(), c.to_string(), d.to_string()))
        .collect();
    assert_eq!(got, want, "{page}");
    // Each tool's answer with its Confidence, and the lines that would decide TRANSITIONS.
    assert_eq!(rows[2][4], "a: 20 (1.000)b: 21 (1.000)");
    assert_eq!(
        rows[2][7],
        "Deadlock-PT-1,StateSpace,TRANSITIONS,20Deadlock-PT-1,StateSpace,TRANSITIONS,21"
    );
    assert_eq!(rows[1][4], "a: 10 (1.000)b: 10 (1.000)c: 11 (1.000)");
    assert!(page.contains("<tr class=\"organisers\">"));
}

/// The href of the first link whose text is `text` on a page.
fn href_of<'a>(page: &'a str, text: &str) -> &'a str {
    let end = page
        .find(&format!(">{text}</a>"))
        .unwrap_or_else(|| panic!("a link {text}: {page}"));
    let start = page[..end].rfind("href=\"").unwrap() + "href=\"".len();
    let len = page[start..].find('"').unwrap();
    &page[start..start + len]
}

#[test]
fn a_value_links_to_its_run_and_the_run_page_shows_its_output() {
    let c = disputed_contest();
    let site = c.path().join("report");
    // Tool a said STATES 10, the organisers decided 11: its tool page lists the value, linked
    // to the run that gave it.
    let tool = std::fs::read_to_string(site.join("tool-0-a.html")).unwrap();
    let run = href_of(&tool, "10");
    assert!(
        run.starts_with("runs/r1-") && run.ends_with(".html"),
        "{run}"
    );
    let page = std::fs::read_to_string(site.join(run)).unwrap();
    assert!(
        page.contains("<h1>Run: a · Deadlock-PT-1 · StateSpace</h1>"),
        "{page}"
    );
    // Its kept stdout, its parsed answers, its measurements and how to reproduce it.
    assert!(
        page.contains("STATE_SPACE STATES 10 TECHNIQUES EXPLICIT\nSTATE_SPACE TRANSITIONS 20"),
        "{page}"
    );
    assert!(page.contains("<td class=\"mono\">STATES</td><td class=\"mono\">10</td>"));
    assert!(page.contains("CPU time") && page.contains("peak memory"));
    assert!(
        page.contains("mccbuild run --rerun --tool a --model Deadlock --examination StateSpace")
    );
    // The run's key is the record's: the page is the run's, not another's.
    let key = c.record("a", "Deadlock-PT-1", "StateSpace")["key"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(page.contains(&key), "{key}");
    // The examination page's cell and the model page's row link the same page.
    let exam = std::fs::read_to_string(site.join("examination-0-StateSpace.html")).unwrap();
    assert!(exam.contains(&format!("href=\"{run}\"")), "{exam}");
    let model = std::fs::read_to_string(site.join("model-0-Deadlock.html")).unwrap();
    assert!(model.contains(&format!("href=\"{run}\"")), "{model}");
    // A second report keeps the page (named after the record's digest), the same bytes.
    let out = c.mccbuild(&["report", "--json"]);
    let summary = json(&out);
    assert_eq!(summary["run_pages_written"], 0, "{summary}");
    assert_eq!(summary["run_pages_kept"], 3, "{summary}");
    assert_eq!(std::fs::read_to_string(site.join(run)).unwrap(), page);
}

/// The value of attribute `name` of the first element of `page` whose tag starts with `tag`.
fn attribute<'a>(page: &'a str, tag: &str, name: &str) -> &'a str {
    let at = page.find(tag).unwrap_or_else(|| panic!("{tag} in {page}"));
    let end = at + page[at..].find('>').unwrap();
    let key = format!(" {name}=\"");
    let start = at
        + page[at..end]
            .find(&key)
            .unwrap_or_else(|| panic!("{name} on {tag}"))
        + key.len();
    &page[start..start + page[start..].find('"').unwrap()]
}

#[test]
fn chart_points_name_their_runs_pages() {
    let c = disputed_contest();
    let site = c.path().join("report");
    let charts = std::fs::read_to_string(site.join("charts-0-StateSpace.html")).unwrap();
    // One instance (label 0), three tools: each column's run page is that tool's run.
    let div = "<div class=\"charts\"";
    assert_eq!(attribute(&charts, div, "data-names"), "Deadlock-PT-1");
    let tools: Vec<&str> = attribute(&charts, div, "data-tools").split('|').collect();
    assert_eq!(tools, ["a", "b", "c"]);
    let rows: Vec<Vec<&str>> = attribute(&charts, div, "data-runs")
        .split('|')
        .map(|row| row.split(' ').collect())
        .collect();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].len(), 3);
    for (column, stem) in rows[0].iter().enumerate() {
        let page = std::fs::read_to_string(site.join(format!("runs/{stem}.html")))
            .unwrap_or_else(|e| panic!("{stem}: {e}"));
        let tool = tools[column];
        assert!(
            page.contains(&format!(
                "<h1>Run: {tool} · Deadlock-PT-1 · StateSpace</h1>"
            )),
            "{page}"
        );
        // The page the results table links for the same run.
        let exam = std::fs::read_to_string(site.join("examination-0-StateSpace.html")).unwrap();
        assert!(exam.contains(&format!("href=\"runs/{stem}.html\"")));
    }
    // Each scatter chart names its two columns, in the order of its title.
    let mut figures = charts
        .match_indices("<figure data-x=\"")
        .map(|(i, _)| &charts[i..]);
    for (x, y) in [(0, 1), (0, 2), (1, 2)] {
        let figure = figures.next().expect("a scatter per pair of tools");
        assert_eq!(attribute(figure, "<figure", "data-x"), x.to_string());
        assert_eq!(attribute(figure, "<figure", "data-y"), y.to_string());
        let title = &figure[figure.find("<title>").unwrap() + 7..];
        assert!(
            title.starts_with(&format!("{} (x) vs {} (y)", tools[x], tools[y])),
            "{title}"
        );
    }
    assert!(figures.next().is_none());
    // The cactus plot's points by column: no run solved it (the organisers decided
    // MAX_TOKEN_PER_MARKING = 4, every tool said 3), so no line and no point.
    let order = attribute(&charts, "<figure data-order", "data-order");
    assert_eq!(order, "||");
    assert!(!charts.contains("class=\"line\""));
    // Without the organisers' decisions, a and b computed every trusted value (TRANSITIONS is
    // unknown), c gave STATES 11 against 10: a's and b's lines have the one point, label 0.
    let manifest = c.path().join("contest.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("corrections = \"corrections.csv\"\n", ""),
    )
    .unwrap();
    let out = c.mccbuild(&["report"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let charts = std::fs::read_to_string(site.join("charts-0-StateSpace.html")).unwrap();
    assert_eq!(
        attribute(&charts, "<figure data-order", "data-order"),
        "0|0|"
    );
    assert_eq!(charts.matches("class=\"line\"").count(), 2);
    // Without JavaScript the page says where the runs are linked.
    assert!(charts.contains("<noscript>"));
}

#[test]
fn the_site_reads_with_and_without_javascript_in_chromium() {
    let Some((chromium, site, _)) = demo_site_for_chromium(&[]) else {
        return;
    };
    let repo = Path::new(REPO);
    // A run page: the first one the StateSpace table links.
    let exam = std::fs::read_to_string(site.path().join("examination-0-StateSpace.html")).unwrap();
    let run_page = href_of(&exam, "run").to_string();
    let shots = repo.join("target/report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let pages = [
        ("index", "index.html"),
        ("tool", "tool-0-explorer.html"),
        ("run", run_page.as_str()),
        ("disputes", "disputes.html"),
        (
            "filtered-table",
            "examination-0-StateSpace.html#filter0=Philosophers",
        ),
        ("charts", "charts-0-StateSpace.html"),
    ];
    for (what, page) in pages {
        for javascript in [true, false] {
            let url = format!("file://{}/{page}", site.path().display());
            // The DOM after the script ran, for the tables it enhances (Chromium cannot dump
            // the DOM without JavaScript: the page's file is what a reader without it gets).
            if what == "filtered-table" || what == "disputes" {
                let (dom, console) = if javascript {
                    open_with(&chromium, &url, None, true)
                } else {
                    let file = site.path().join(page.split('#').next().unwrap());
                    (std::fs::read_to_string(file).unwrap(), Vec::new())
                };
                assert!(
                    console.is_empty(),
                    "{page} logs to the console: {console:?}"
                );
                assert!(dom.contains("<h1>"), "{page}: {dom}");
                let bars = dom.matches("class=\"tablebar\"").count();
                let tables = dom.matches("<table class=\"data").count();
                assert_eq!(bars, if javascript { tables } else { 0 }, "{page}");
                if what == "filtered-table" {
                    // Six StateSpace instances, two of them Philosophers (models/).
                    let hidden = dom.matches("style=\"display: none;\"").count();
                    if javascript {
                        assert!(dom.contains("2 of 6 rows"), "{dom}");
                        assert_eq!(hidden, 4, "the other rows hidden");
                    } else {
                        assert_eq!(hidden, 0);
                    }
                }
            }
            let png = shots.join(format!(
                "{what}-{}.png",
                if javascript { "js" } else { "no-js" }
            ));
            let (_, console) = open_with(&chromium, &url, Some(&png), javascript);
            assert!(console.is_empty(), "{console:?}");
            assert!(
                pixels_of(&png, [0x1f, 0x3b, 0x5a]) > 1000,
                "page drawn ({})",
                png.display()
            );
            eprintln!("screenshot: {}", png.display());
        }
    }
}
