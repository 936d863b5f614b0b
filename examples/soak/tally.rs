//! The soak run's figures: what the workers saved against what a fresh machine reads back.

use std::collections::{BTreeMap, BTreeSet};

use crate::fake_forge::{CommentRow, IssueRow};

/// A comment on the fake: its issue, creation time (whole seconds) and body.
pub type Comment = (u64, i64, String);

/// What the fake holds at the end.
pub struct Forge {
    pub comments: Vec<Comment>,
    /// Each closed issue's closing time.
    pub closed_at: BTreeMap<u64, i64>,
}

/// What one fresh machine read: every listed record (id, session, phase), and per worker the
/// step its session resumes after.
pub struct Reading {
    pub listed: Vec<(String, String, String)>,
    pub resumed: Vec<Option<usize>>,
}

/// What the workers did: per worker, (step, record id, spooled) of each saved step, and the
/// last step it knows is done (saved, or a killed command's that `resume` found).
pub struct Work {
    pub saved: Vec<Vec<(usize, String, bool)>>,
    pub done: Vec<Option<usize>>,
}

/// Prints what `reading` shows of `work`; returns (lost, duplicated: Ids listed twice plus
/// steps listed as two records).
pub fn print(label: &str, work: &Work, reading: &Reading, forge: &Forge) -> (usize, usize) {
    let saved = &work.saved;
    let mut listed_ids: BTreeMap<&str, usize> = BTreeMap::new();
    let mut steps_seen: BTreeMap<(&str, &str), BTreeSet<&str>> = BTreeMap::new();
    for (id, session, phase) in &reading.listed {
        *listed_ids.entry(id.as_str()).or_default() += 1;
        steps_seen
            .entry((session.as_str(), phase.as_str()))
            .or_default()
            .insert(id.as_str());
    }
    // Invisible records by where they are: [on an open issue, on a closed one before it
    // closed, in the second it closed (the fake's times are whole seconds), after it closed
    // (a late record)].
    let (mut lost, mut invisible) = (0, [0; 4]);
    for (_, id, _) in saved.iter().flatten() {
        if listed_ids.contains_key(id.as_str()) {
            continue;
        }
        match forge
            .comments
            .iter()
            .find(|(.., body)| body.contains(id.as_str()))
        {
            Some((issue, created, _)) => match forge.closed_at.get(issue) {
                None => invisible[0] += 1,
                Some(at) if created < at => invisible[1] += 1,
                Some(at) if created == at => invisible[2] += 1,
                Some(_) => invisible[3] += 1,
            },
            None => lost += 1,
        }
    }
    let saved_ids: BTreeSet<&str> = saved.iter().flatten().map(|s| s.1.as_str()).collect();
    let unreported = listed_ids
        .keys()
        .filter(|id| !saved_ids.contains(**id))
        .count();
    let twice = listed_ids.values().filter(|&&n| n > 1).count();
    let split = steps_seen.values().filter(|ids| ids.len() > 1).count();
    let mut wrong = Vec::new();
    for (w, &last) in work.done.iter().enumerate() {
        let resumed = reading.resumed.get(w).copied().flatten();
        if last.is_none() || resumed != last {
            wrong.push(format!("w{w:02} at {resumed:?}, done up to {last:?}"));
        }
    }

    println!("read by a fresh machine {label}:");
    println!(
        "  records listed:   {} ({unreported} not reported saved: from killed commands)",
        reading.listed.len()
    );
    println!("  duplicates:       {twice} Ids listed twice, {split} steps listed as two records");
    println!("  lost:             {lost} (saved, on no issue, in no outbox)");
    println!(
        "  invisible:        {} (saved, on an issue, not listed: on an open issue {}; on a \
         closed one, posted before it closed (history a rotation did not carry) {}, in the \
         second it closed {}, after it closed (late records) {})",
        invisible.iter().sum::<usize>(),
        invisible[0],
        invisible[1],
        invisible[2],
        invisible[3]
    );
    println!(
        "  wrong resumes:    {}{}",
        wrong.len(),
        if wrong.is_empty() {
            String::new()
        } else {
            format!(" ({})", wrong.join("; "))
        }
    );
    (lost, twice + split)
}

/// The session issues on the fake: how many were made and closed, and how they came about.
pub struct Rotations {
    pub made: usize,
    pub closed: usize,
    /// Issues whose body links a predecessor (`Previous session issue: #N`): rotations' successors.
    pub successors: usize,
    /// Issues closed by a rotation (with its `Rotated: this session continues in #M` note).
    pub closing_notes: usize,
    /// One line per issue: number, made and closed (seconds after the first), comments.
    pub lines: Vec<String>,
    /// Comments on the fake, of which copies (`Carried-From:`), distinct record `Id`s, and the
    /// most comments that hold one `Id`.
    pub comments: usize,
    pub copies: usize,
    pub ids: usize,
    pub most_of_one_id: usize,
}

impl Rotations {
    pub fn of(issues: &[IssueRow], comments: &[CommentRow]) -> Rotations {
        let ours: Vec<&IssueRow> = issues
            .iter()
            .filter(|i| i.title == forgestate::defaults::TITLE)
            .collect();
        let noted: BTreeSet<u64> = comments
            .iter()
            .filter(|c| c.body.starts_with("Rotated: this session continues in #"))
            .map(|c| c.issue)
            .collect();
        let t0 = ours.iter().map(|i| i.created).min().unwrap_or_default();
        let lines = ours
            .iter()
            .map(|i| {
                let n = comments.iter().filter(|c| c.issue == i.number).count();
                let state = match i.closed_at {
                    Some(at) if i.closed => format!("closed +{}s", at - t0),
                    _ => "open".to_string(),
                };
                format!("#{} +{}s {state} {n}c", i.number, i.created - t0)
            })
            .collect();
        let mut by_id: BTreeMap<&str, usize> = BTreeMap::new();
        for c in comments {
            if let Some(id) = c
                .body
                .lines()
                .find_map(|l| l.trim_end().strip_prefix("Id: "))
            {
                *by_id.entry(id).or_default() += 1;
            }
        }
        Rotations {
            comments: comments.len(),
            copies: comments
                .iter()
                .filter(|c| c.body.lines().any(|l| l.starts_with("Carried-From: ")))
                .count(),
            ids: by_id.len(),
            most_of_one_id: by_id.values().copied().max().unwrap_or_default(),
            made: ours.len(),
            closed: ours.iter().filter(|i| i.closed).count(),
            successors: ours
                .iter()
                .filter(|i| i.body.contains("Previous session issue: #"))
                .count(),
            closing_notes: ours.iter().filter(|i| noted.contains(&i.number)).count(),
            lines,
        }
    }

    pub fn print(&self) {
        println!(
            "session issues on the fake: {} made ({} successors of a rotation, {} others: \
             the first and creation-race duplicates), {} closed ({} by a rotation's closing note)",
            self.made,
            self.successors,
            self.made - self.successors,
            self.closed,
            self.closing_notes
        );
        println!(
            "  comments on the fake: {} holding {} distinct record Ids; {} of them copies \
             (Carried-From); one Id is held by up to {} comments",
            self.comments, self.ids, self.copies, self.most_of_one_id
        );
        println!(
            "  issues (made, closed: seconds after the first; c: comments): {}",
            self.lines.join("; ")
        );
    }
}
