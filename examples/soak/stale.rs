//! The soak run's stale-resume figures (issue #27, "no wrong resume"): every `resume` the run
//! asked, against the newest step the worker knew it had saved then, and for each stale answer
//! where it came from on the fake (issues, comment ids, `Posted-At:`, `Carried-From:`).

use std::collections::BTreeMap;

use crate::machine::step_of;
use crate::worker::{Kind, Probe};

/// A comment on the fake, with the record lines the diagnosis needs.
pub struct Posted {
    pub id: u64,
    pub issue: u64,
    /// Seconds after the run started (the fake's clock).
    pub created: i64,
    pub body: String,
}

impl Posted {
    /// The value of header line `key` (`"Phase"`, `"Id"`, ...).
    fn line(&self, key: &str) -> Option<&str> {
        let prefix = format!("{key}: ");
        self.body
            .lines()
            .find_map(|l| l.trim_end().strip_prefix(prefix.as_str()))
    }

    fn session(&self) -> Option<&str> {
        self.line("Session")
    }

    fn step(&self) -> Option<usize> {
        self.body
            .starts_with("[CHECKPOINT]")
            .then(|| self.line("Phase").and_then(step_of))
            .flatten()
    }

    fn describe(&self) -> String {
        let mut s = format!(
            "comment {} on #{} at +{}s, Id {}",
            self.id,
            self.issue,
            self.created,
            self.line("Id").unwrap_or("?")
        );
        if let Some(from) = self.line("Carried-From") {
            s += &format!(", Carried-From {from}");
        }
        if let Some(at) = self.line("Posted-At") {
            s += &format!(", Posted-At {at}");
        }
        s
    }
}

/// An issue on the fake: number, made and closed (seconds after the start).
pub type Issue = (u64, i64, Option<i64>);

/// What one probe's answer says against what the worker knew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    NoAnswer,
    /// Older than the reference (or a fresh start when a step was saved).
    Stale,
    /// At or past the reference, older than the newest step saved: that step is spooled.
    BehindSpooled,
    /// The newest step saved, exactly.
    Current,
    /// Newer than the worker knew (a killed command that posted): fine if it is on the fake.
    Newer,
}

fn verdict(p: &Probe) -> Verdict {
    let Some(answer) = &p.answer else {
        return Verdict::NoAnswer;
    };
    let got = answer.step;
    if got < p.reference {
        Verdict::Stale
    } else if got < p.done {
        Verdict::BehindSpooled
    } else if got == p.done {
        Verdict::Current
    } else {
        Verdict::Newer
    }
}

fn label(kind: Kind) -> &'static str {
    match kind {
        Kind::Own => "own machine, after each saved step",
        Kind::Recovery => "own machine, after a killed or failed command",
        Kind::Fresh => "fresh machine (empty cache), during the run",
        Kind::End => "fresh machine per session, at the end",
    }
}

/// Prints the figures of every kind of probe, then the stale answers in detail. Returns
/// (stale from the own machine, stale from fresh machines).
pub fn print(probes: &[&Probe], comments: &[Posted], issues: &[Issue]) -> (usize, usize) {
    let posted = |w: usize, step: usize| {
        let session = format!("soak-{w:02}");
        comments
            .iter()
            .any(|c| c.session() == Some(session.as_str()) && c.step() == Some(step))
    };
    let mut stale = Vec::new();
    let (mut own, mut fresh) = (0, 0);
    println!(
        "resumes asked (stale: older than the newest step saved; for a fresh machine, saved by a post):"
    );
    for kind in [Kind::Own, Kind::Recovery, Kind::Fresh, Kind::End] {
        let of_kind: Vec<&&Probe> = probes.iter().filter(|p| p.kind == kind).collect();
        let mut n: BTreeMap<&str, usize> = BTreeMap::new();
        for p in &of_kind {
            let v = verdict(p);
            let key = match v {
                Verdict::NoAnswer => "no answer",
                Verdict::Stale => "STALE",
                Verdict::BehindSpooled => "behind a spooled step only",
                Verdict::Current => "current",
                Verdict::Newer => {
                    let step = p.answer.as_ref().and_then(|a| a.step).unwrap_or_default();
                    if posted(p.worker, step) {
                        "newer, and on the fake"
                    } else {
                        "NEWER, NOT ON THE FAKE"
                    }
                }
            };
            *n.entry(key).or_default() += 1;
            if matches!(key, "STALE" | "NEWER, NOT ON THE FAKE") {
                stale.push(**p);
                match kind {
                    Kind::Own | Kind::Recovery => own += 1,
                    Kind::Fresh | Kind::End => fresh += 1,
                }
            }
            if p.answer.as_ref().is_some_and(|a| a.json["offline"] == true) {
                *n.entry("of which offline").or_default() += 1;
            }
        }
        let parts: Vec<String> = n.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!(
            "  {:<48} {:>4}: {}",
            label(kind),
            of_kind.len(),
            parts.join(", ")
        );
    }
    for p in stale.iter().take(12) {
        diagnose(p, comments, issues);
    }
    if stale.len() > 12 {
        println!("  ... and {} more stale answers", stale.len() - 12);
    }
    (own, fresh)
}

/// One stale answer: what it said, and the session's records on the fake around it.
fn diagnose(p: &Probe, comments: &[Posted], issues: &[Issue]) {
    let answer = p.answer.as_ref();
    let json = answer.map(|a| &a.json);
    let field = |k: &str| json.map_or("-".to_string(), |j| j[k].to_string());
    println!(
        "  STALE ({:?}) w{:02} at +{:.1}s on {}: answered {} (record {}, comment {}, time {}, \
         pending {}, offline {}, complete {}), reference step {:?}, newest saved {:?}",
        p.kind,
        p.worker,
        p.at,
        p.machine.display(),
        field("phase"),
        field("record_id"),
        field("comment_id"),
        field("time"),
        field("pending"),
        field("offline"),
        field("complete"),
        p.reference,
        p.done
    );
    if let Some(w) = json
        .and_then(|j| j["warnings"].as_array())
        .filter(|w| !w.is_empty())
    {
        println!("    warnings: {w:?}");
    }
    let session = format!("soak-{:02}", p.worker);
    let low = answer.and_then(|a| a.step).unwrap_or_default();
    let high = p.done.unwrap_or_default().max(low);
    let mut touched = Vec::new();
    for c in comments
        .iter()
        .filter(|c| c.session() == Some(session.as_str()))
    {
        if let Some(step) = c.step().filter(|s| (low..=high).contains(s)) {
            println!("    step_{step:02}: {}", c.describe());
            touched.push(c.issue);
        }
    }
    touched.sort_unstable();
    touched.dedup();
    let timeline: Vec<String> = issues
        .iter()
        .filter(|i| touched.contains(&i.0))
        .map(|(n, made, closed)| match closed {
            Some(at) => format!("#{n} made +{made}s, closed +{at}s"),
            None => format!("#{n} made +{made}s, open"),
        })
        .collect();
    println!("    issues: {}", timeline.join("; "));
}

/// Writes one line per comment on the fake to `path` (kept with `--keep`): comment id, issue,
/// seconds after the start, and the record lines the order depends on.
pub fn dump(path: &std::path::Path, comments: &[Posted]) {
    let mut out = String::from(
        "comment\tissue\tcreated\tkind\tsession\tphase\tid\tcarried_from\tposted_at\n",
    );
    for c in comments {
        let kind = c.body.lines().next().unwrap_or_default();
        let field = |k: &str| c.line(k).unwrap_or("-").to_string();
        out += &format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\n",
            c.id,
            c.issue,
            c.created,
            kind.chars().take(40).collect::<String>(),
            field("Session"),
            field("Phase"),
            field("Id"),
            field("Carried-From"),
            field("Posted-At")
        );
    }
    let _ = std::fs::write(path, out);
}
