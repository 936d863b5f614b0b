//! Where to resume: mapping an agent's last phase to a resume point, and the typed state the
//! seed's `resume_implementation` restores.
//!
//! Keys of the map are globs (`subtask_*_complete`) for agents and phases alike. The most specific
//! key wins: an exact key beats any glob, and among globs the one with more literal characters
//! wins (ties go to the alphabetically first). An unknown phase maps to the configured default.

use std::collections::BTreeMap;

use glob::Pattern;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::format::{empty_object, key_matches};
use crate::scan::Entry;

/// Re-exported from [`crate::format`], where the rule lives (the scan's filters use it too).
pub use crate::format::glob_matches;

/// The phase reported when there is no checkpoint at all.
pub const FRESH_START: &str = "fresh_start";

/// The `[resume]` table of a configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResumeConfig {
    /// The resume point of a phase no agent table names.
    pub default: Option<String>,
    /// Per agent (a glob), phase to resume point.
    #[serde(default)]
    pub agents: BTreeMap<String, BTreeMap<String, String>>,
}

#[derive(Clone)]
struct Rule<T> {
    key: String,
    pattern: Pattern,
    value: T,
}

/// Compiled resume map.
#[derive(Clone)]
pub struct ResumeMap {
    default: String,
    agents: Vec<Rule<Vec<Rule<String>>>>,
}

impl std::fmt::Debug for ResumeMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let agents: Vec<&str> = self.agents.iter().map(|r| r.key.as_str()).collect();
        f.debug_struct("ResumeMap")
            .field("default", &self.default)
            .field("agents", &agents)
            .finish()
    }
}

impl Default for ResumeMap {
    /// The seed's `PHASE_RESUME_MAP` (with a glob for every subtask), read from the built-in
    /// defaults (`config/forgestate.toml`), so the library and the documented file share one
    /// source.
    fn default() -> Self {
        // Only the `[resume]` table: the rest of the file is the configuration's business.
        #[derive(Deserialize)]
        struct Built {
            #[serde(default)]
            resume: ResumeConfig,
        }
        toml::from_str::<Built>(crate::defaults::CONFIG_TOML)
            .ok()
            .and_then(|file| ResumeMap::new(&file.resume).ok())
            .unwrap_or_else(|| ResumeMap {
                default: "start".to_string(),
                agents: Vec::new(),
            })
    }
}

impl ResumeMap {
    /// Compiles a `[resume]` table. The error names the bad key.
    pub fn new(config: &ResumeConfig) -> Result<ResumeMap, String> {
        let compile = |key: &str| {
            Pattern::new(key)
                .map_err(|e| format!("resume map key {key:?} is not a valid glob: {e}"))
        };
        let mut agents = Vec::new();
        for (agent, phases) in &config.agents {
            let mut rules = Vec::new();
            for (phase, point) in phases {
                if point.trim().is_empty() {
                    return Err(format!(
                        "[resume.agents.{agent:?}] {phase:?} is empty; set a resume point or \
                         remove the key"
                    ));
                }
                rules.push(Rule {
                    key: phase.clone(),
                    pattern: compile(phase)?,
                    value: point.clone(),
                });
            }
            agents.push(Rule {
                key: agent.clone(),
                pattern: compile(agent)?,
                value: rules,
            });
        }
        let default = config
            .default
            .clone()
            .unwrap_or_else(|| "start".to_string());
        if default.trim().is_empty() {
            return Err(
                "[resume] default is empty; set a resume point such as \"start\" or remove \
                 the key"
                    .to_string(),
            );
        }
        Ok(ResumeMap { default, agents })
    }

    /// The resume point for an unknown phase, and for a fresh start.
    pub fn default_point(&self) -> &str {
        &self.default
    }

    /// The resume point for an agent's phase.
    pub fn point(&self, agent: &str, phase: &str) -> &str {
        self.mapped(agent, phase).unwrap_or(self.default.as_str())
    }

    /// The phase table `agent` resumes by: the most specific agent key's phases (globs kept as
    /// written) and their resume points. Empty when no agent key matches (every phase then
    /// resumes at the default).
    pub fn phases(&self, agent: &str) -> BTreeMap<String, String> {
        best(&self.agents, agent)
            .map(|rules| {
                rules
                    .iter()
                    .map(|r| (r.key.clone(), r.value.clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The resume point the map gives an agent's phase; `None` when no key matches, and
    /// [`ResumeMap::point`] falls back to the default.
    pub fn mapped(&self, agent: &str, phase: &str) -> Option<&str> {
        best(&self.agents, agent)
            .and_then(|rules| best(rules, phase))
            .map(String::as_str)
    }
}

fn best<'a, T>(rules: &'a [Rule<T>], name: &str) -> Option<&'a T> {
    most_specific(
        rules.iter().map(|r| (r.key.as_str(), &r.pattern, &r.value)),
        name,
    )
}

/// The value of the most specific rule (key, compiled glob, value) matching `name`: an exact
/// key beats any glob; among globs, more literal characters win; ties go to the alphabetically
/// first key. Every per-agent table of the configuration picks its rule this one way.
pub(crate) fn most_specific<'a, T: 'a>(
    rules: impl Iterator<Item = (&'a str, &'a Pattern, &'a T)>,
    name: &str,
) -> Option<&'a T> {
    let specificity = |key: &str| {
        let exact = !key.contains(['*', '?', '[']);
        let literal = key
            .chars()
            .filter(|c| !matches!(c, '*' | '?' | '[' | ']'))
            .count();
        (exact, literal, std::cmp::Reverse(key.to_string()))
    };
    rules
        .filter(|(key, pattern, _)| key_matches(key, pattern, name))
        .max_by_key(|(key, _, _)| specificity(key))
        .map(|(_, _, value)| value)
}

/// The answer to "where do I pick up?".
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Resume {
    /// Where to pick up: the resume map's answer for the last phase.
    pub resume_point: String,
    /// The last checkpoint's phase, or `fresh_start`.
    pub phase: String,
    /// The last checkpoint's whole data object (empty on a fresh start).
    pub data: Value,
    /// The checkpoint the answer comes from; `None` on a fresh start.
    pub checkpoint: Option<Entry>,
    /// The store could not be read: this answer comes from this machine's read cache and outbox.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub offline: bool,
    /// The phase matched no key of the resume map, so `resume_point` is the default.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub unmapped: bool,
    /// Handoff: the checkpoint's next step, in words (absent from the JSON when none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next: Option<String>,
    /// Handoff: the checkpoint's blockers (absent from the JSON when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blockers: Vec<String>,
    /// Set by [`Resume::check_context`]: whether the context file changed since the checkpoint
    /// (`true` too when the checkpoint recorded no `Context-Hash:`, since nobody can say).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_drift: Option<bool>,
}

impl Resume {
    /// Resume from `checkpoint`, or start fresh when there is none.
    pub fn from_checkpoint(map: &ResumeMap, checkpoint: Option<Entry>) -> Resume {
        match checkpoint {
            None => Resume {
                resume_point: map.default_point().to_string(),
                phase: FRESH_START.to_string(),
                data: empty_object(),
                ..Resume::default()
            },
            Some(entry) => {
                let phase = entry.record.phase().unwrap_or(FRESH_START).to_string();
                let mapped = map.mapped(&entry.record.agent, &phase).map(str::to_string);
                Resume {
                    unmapped: mapped.is_none(),
                    resume_point: mapped.unwrap_or_else(|| map.default_point().to_string()),
                    phase,
                    data: entry.record.data().clone(),
                    next: entry.record.next.clone(),
                    blockers: entry.record.blockers.clone(),
                    checkpoint: Some(entry),
                    ..Resume::default()
                }
            }
        }
    }

    /// Compares the context file the agent has now with the `Context-Hash:` of the checkpoint
    /// and sets [`Resume::context_drift`]: `false` only when the hashes agree, or on a fresh
    /// start (no state to be stale).
    ///
    /// ```
    /// use forgestate::resume::{Resume, ResumeMap};
    /// let mut fresh = Resume::from_checkpoint(&ResumeMap::default(), None);
    /// assert!(!fresh.check_context(b"# STATUS"));
    /// assert_eq!(fresh.context_drift, Some(false));
    /// ```
    pub fn check_context(&mut self, context: &[u8]) -> bool {
        let drift = match &self.checkpoint {
            None => false,
            Some(e) => {
                e.record.context_hash.as_deref()
                    != Some(crate::format::context_hash(context).as_str())
            }
        };
        self.context_drift = Some(drift);
        drift
    }

    /// The seed's `resume_implementation` state. `working_dir` given here wins over the saved one,
    /// as in the seed.
    pub fn implementation_state(&self, working_dir: Option<&str>) -> ImplementationState {
        let d = &self.data;
        ImplementationState {
            issue_number: d.get("issue_number").and_then(Value::as_u64),
            branch_name: d
                .get("branch_name")
                .and_then(Value::as_str)
                .map(str::to_string),
            completed_subtasks: d
                .get("completed_subtasks")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            pr_number: d.get("pr_number").and_then(Value::as_u64),
            working_dir: working_dir.map(str::to_string).or_else(|| {
                d.get("working_dir")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            }),
        }
    }
}

/// The state fields an implementation worker restores. A field that is absent, or of the wrong
/// JSON type, is `None` (or empty) rather than an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ImplementationState {
    /// The issue being worked on.
    pub issue_number: Option<u64>,
    /// The working branch.
    pub branch_name: Option<String>,
    /// The subtasks already done.
    pub completed_subtasks: Vec<Value>,
    /// The pull request opened.
    pub pr_number: Option<u64>,
    /// The working directory.
    pub working_dir: Option<String>,
}

/// The "did you mean" line for a fresh start of `agent` in `session`, from the (agent, session)
/// pairs that have checkpoints: the agent's other sessions and the session's other agents,
/// closest names first (three at most each); `None` when neither has any.
pub fn did_you_mean(
    agent: &str,
    session: &str,
    names: &std::collections::BTreeSet<(String, String)>,
) -> Option<String> {
    let closest = |target: &str, pool: Vec<&str>| -> Vec<String> {
        let mut pool: Vec<(usize, &str)> = pool
            .into_iter()
            .map(|name| (edit_distance(target, name), name))
            .collect();
        pool.sort();
        pool.dedup();
        pool.iter().take(3).map(|(_, n)| format!("{n:?}")).collect()
    };
    let sessions = closest(
        session,
        names
            .iter()
            .filter(|(a, _)| a == agent)
            .map(|(_, s)| s.as_str())
            .collect(),
    );
    let agents = closest(
        agent,
        names
            .iter()
            .filter(|(_, s)| s == session)
            .map(|(a, _)| a.as_str())
            .collect(),
    );
    let mut options = Vec::new();
    if !sessions.is_empty() {
        options.push(format!("session {}", sessions.join(" or ")));
    }
    if !agents.is_empty() {
        options.push(format!("agent {}", agents.join(" or ")));
    }
    if options.is_empty() {
        return None;
    }
    Some(format!(
        "no checkpoint of agent {agent:?} in session {session:?}, so this is a fresh start; \
         did you mean {}?",
        options.join(", or ")
    ))
}

/// Levenshtein distance over characters (the "did you mean" of names and verbs).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
