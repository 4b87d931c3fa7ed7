//! `diff`'s page: one standalone HTML page (no script, no external resource) with the values,
//! regressions first, the slower runs, the scores and the time ratios.

use super::{CHANGES, Change, DiffReport};

/// The comparison as one standalone HTML page (no script, no external resource).
pub fn diff_page(r: &DiffReport) -> String {
    use maud::{DOCTYPE, html};
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
    let title = format!("{} -> {}", r.old, r.new);
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                style { "body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}td.n{text-align:right}.ok{color:#070}.bad{color:#b00}" }
            }
            body {
                h1 { (title) }
                p { "Every value whose answer differs, against the contest's trusted values (basis: " b { (r.basis) } "; made by " code { "mccbuild diff" } ")." }
                p { @for (i, c) in CHANGES.iter().enumerate() { @if i > 0 { ", " } (c.name()) " " b { (r.counts.get(c).copied().unwrap_or(0)) } } }
                @if r.not_in_store > 0 { p.bad { (r.not_in_store) " examination instances left out: a version's run is not in the store." } }
                table {
                    tr { th { "instance" } th { "examination" } th { "value" } th { (r.old) } th { (r.new) } th { "trusted" } th { "change" } }
                    @for v in &r.values {
                        @let changes: Vec<&str> = v.changes.iter().map(|c| c.name()).collect();
                        tr {
                            td { (v.instance) } td { (v.examination) } td { (v.id) }
                            td { (show(&v.old)) } td { (show(&v.new)) } td { (v.trusted.as_deref().unwrap_or("unknown")) }
                            td class=(if v.changes.contains(&Change::NewlyWrong) { "bad" } else if v.changes.contains(&Change::NewlyRight) { "ok" } else { "" }) { (changes.join(", ")) }
                        }
                    }
                }
                h2 { "Slower runs (x" (r.slower_factor) " or more, runs of " (super::NOISE_FLOOR_S) " s or more)" }
                @if r.slower.is_empty() { p { "None." } } @else {
                    table {
                        tr { th { "instance" } th { "examination" } th { "time (s), old" } th { "new" } th { "ratio" } }
                        @for s in &r.slower {
                            tr.bad { td { (s.instance) } td { (s.examination) } td.n { (format!("{:.2}", s.old_time_s)) } td.n { (format!("{:.2}", s.new_time_s)) } td.n { (format!("x{:.1}", s.ratio)) } }
                        }
                    }
                }
                h2 { "Scores" }
                table {
                    tr { th { "category" } th { (r.old) } th { (r.new) } }
                    @for (category, (a, b)) in &r.scores {
                        @if !(a.is_null() && b.is_null()) { tr { td { (category) } td.n { (a) } td.n { (b) } } }
                    }
                }
                @if !r.scores_not_compared.is_empty() { p { "Not compared: " (r.scores_not_compared.join(", ")) " (on some examination instances the run of one version only is in the store)." } }
                h2 { "CPU time and memory, new / old" }
                table {
                    tr { th { "examination" } th { "runs" } th { "CPU time (s), old" } th { "new" } th { "CPU time ratio" } th { "memory ratio" } }
                    @for (exam, m) in &r.measurements {
                        tr { td { (exam) } td.n { (m.runs) } td.n { (format!("{:.2}", m.old_cpu_time_s)) } td.n { (format!("{:.2}", m.new_cpu_time_s)) }
                            td.n { (format!("{:.2}", m.cpu_time_ratio)) } td.n { (format!("{:.2}", m.memory_ratio)) } }
                    }
                }
            }
        }
    }
    .into_string()
}
