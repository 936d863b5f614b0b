//! The elements in flight between the splitter and their filing: whole elements the splitter
//! found, decoded into [`Piece`]s on a few worker threads, a batch of elements at a time, and
//! filed ([`State::apply`]) in list order on the splitter's thread, which alone decides what is
//! order-dependent (the kept cap, deferred issues, the digest's spills).
//!
//! A batch goes to the workers when it is full or when the splitter is about to wait for the
//! reader, so bytes that arrive slowly are decoded as they come. What is in flight is bounded,
//! and its bytes stay in the source from the mark on, so an element a worker's slice reader
//! refuses is read again there by the streaming reader, exactly as without workers (everything
//! after it is dropped and split again). A worker that panics fails the decode; none hangs it.
//! On a machine with one core (or when no thread can be made) the elements are decoded and
//! filed in their turn, no thread.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Read;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::Scope;

use serde::de::Error as _;

use super::source::{Lead, Source};
use super::{Filter, Piece, State};

/// What decodes one whole element (its bytes, whether it is of a closed kind, the filter, and
/// the issues deferred so far when it is decoded in its turn): `None` when the slice reader
/// refuses it.
pub(super) type Work = fn(&[u8], bool, &Filter, Option<&BTreeSet<u64>>) -> Option<Piece>;

/// How the elements are decoded: on how many workers, in batches of about how many bytes, with
/// at most about how many bytes in flight.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    /// `0`: in the splitter's thread, each element in its turn.
    pub workers: usize,
    pub batch: usize,
    pub in_flight: usize,
    pub work: Work,
}

/// The fewest cores on which elements decode on workers. On 2 cores a cold 10k `resume`
/// measured 0.28-0.29 s with two workers against 0.26 s in turn (docs/benchmarks.md, eighth
/// round): the hand-offs cost more than the second core gave while the runtime and the
/// download share it.
pub const POOL_FROM_CORES: usize = 4;

impl Plan {
    /// The plan for this machine.
    pub fn for_machine(work: Work) -> Plan {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Plan::for_cores(cores, work)
    }

    /// The plan for `cores` cores: none below [`POOL_FROM_CORES`], else a worker a core, up to
    /// four.
    pub fn for_cores(cores: usize, work: Work) -> Plan {
        Plan {
            workers: match cores {
                n if n < POOL_FROM_CORES => 0,
                n => n.min(4),
            },
            batch: 256 * 1024,
            in_flight: 1 << 20,
            work,
        }
    }
}

/// One element of the list, where it is in the answer.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub start: usize,
    pub end: usize,
    /// How the whole answer's reader stood before it.
    pub lead: Lead,
    /// Whether it is a string, an object or an array (see `Scan::closed_kind`).
    pub closed: bool,
}

/// An element the slice reader refused: the mark is before it, for the streaming reader.
#[derive(Debug, Clone, Copy)]
pub(super) struct Refused {
    pub lead: Lead,
    pub closed: bool,
}

/// A batch of whole elements for a worker.
#[derive(Default)]
struct Job {
    seq: u64,
    bytes: Vec<u8>,
    /// Each element's range in `bytes`, and whether it is of a closed kind.
    elements: Vec<(usize, usize, bool)>,
}

/// What a worker made of a batch: a piece per element, up to the first refused (`None`);
/// `Err` when it panicked.
type Made = Result<Vec<Option<Piece>>, ()>;

/// The elements in flight.
pub(super) struct Feed<'f> {
    filter: &'f Filter,
    plan: Plan,
    /// The workers' queue; `None` without workers.
    jobs: Option<mpsc::Sender<Job>>,
    results: Option<mpsc::Receiver<(u64, Made)>>,
    /// The batch being filled, and its elements' spans.
    batch: Job,
    spans: Vec<Span>,
    /// The bytes and spans of the batches sent and not filed, oldest first.
    sent: VecDeque<(usize, Vec<Span>)>,
    /// The next batch to file, and the next to send.
    next: u64,
    seq: u64,
    /// Batches made ahead of their turn.
    early: BTreeMap<u64, Made>,
    /// The bytes of the batches sent and not filed.
    flying: usize,
    /// The elements filed (for the tests).
    pub filed: usize,
}

impl<'f> Feed<'f> {
    /// Starts `plan`'s workers in `scope`, decoding with `filter`.
    pub fn start<'s>(scope: &'s Scope<'s, '_>, filter: &'f Filter, plan: Plan) -> Feed<'f>
    where
        'f: 's,
    {
        let mut feed = Feed {
            filter,
            plan,
            jobs: None,
            results: None,
            batch: Job::default(),
            spans: Vec::new(),
            sent: VecDeque::new(),
            next: 0,
            seq: 0,
            early: BTreeMap::new(),
            flying: 0,
            filed: 0,
        };
        if plan.workers == 0 {
            return feed;
        }
        let (jobs, queue) = mpsc::channel::<Job>();
        let queue = Arc::new(Mutex::new(queue));
        let (done, results) = mpsc::channel();
        let mut started = 0;
        for _ in 0..plan.workers {
            let (queue, done) = (Arc::clone(&queue), done.clone());
            let worker = std::thread::Builder::new().spawn_scoped(scope, move || {
                loop {
                    // The queue's lock is held only to take a job; a poisoned one stops.
                    let job = match queue.lock() {
                        Ok(queue) => queue.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else {
                        return;
                    };
                    let made = catch_unwind(AssertUnwindSafe(|| decode(&job, filter, plan.work)));
                    let failed = made.is_err();
                    if done.send((job.seq, made.map_err(drop))).is_err() || failed {
                        return;
                    }
                }
            });
            started += usize::from(worker.is_ok());
        }
        if started == 0 {
            // No thread could be made: each element in its turn.
            return feed;
        }
        feed.jobs = Some(jobs);
        feed.results = Some(results);
        feed
    }

    /// The most bytes a batch holds before it is sent.
    pub fn batch(&self) -> usize {
        self.plan.batch
    }

    /// Takes the element `span` (its bytes in `source`): decoded and filed now without workers,
    /// else added to the batch, which goes when full, and whatever is made by then is filed.
    /// `Some` when an element was refused (the mark is before it; the rest is dropped).
    pub fn push<R: Read>(
        &mut self,
        span: Span,
        source: &mut Source<R>,
        state: &mut State,
    ) -> Result<Option<Refused>, serde_json::Error> {
        if self.jobs.is_none() {
            let bytes = source.bytes(span.start, span.end);
            let deferred = Some(&state.out.deferred);
            let piece = (self.plan.work)(bytes, span.closed, self.filter, deferred);
            return match piece {
                Some(piece) => file(piece, span, source, state, &mut self.filed).map(|()| None),
                None => Ok(Some(refused(span))),
            };
        }
        let from = self.batch.bytes.len();
        (self.batch.bytes).extend_from_slice(source.bytes(span.start, span.end));
        let to = self.batch.bytes.len();
        self.batch.elements.push((from, to, span.closed));
        self.spans.push(span);
        if to >= self.plan.batch {
            self.flush();
        }
        self.collect(false, source, state)
    }

    /// Sends the batch being filled (before the splitter waits for the reader).
    pub fn flush(&mut self) {
        let Some(jobs) = &self.jobs else {
            return;
        };
        if self.spans.is_empty() {
            return;
        }
        let mut job = std::mem::take(&mut self.batch);
        job.seq = self.seq;
        self.seq += 1;
        self.flying += job.bytes.len();
        self.sent
            .push_back((job.bytes.len(), std::mem::take(&mut self.spans)));
        // A send fails only when every worker has stopped: `collect` then says so.
        let _ = jobs.send(job);
    }

    /// Files everything in flight, in order.
    pub fn settle<R: Read>(
        &mut self,
        source: &mut Source<R>,
        state: &mut State,
    ) -> Result<Option<Refused>, serde_json::Error> {
        self.flush();
        self.collect(true, source, state)
    }

    /// Files the batches made, in order: all of them with `all`, else those made by now (and
    /// more, waiting, while too much is in flight).
    fn collect<R: Read>(
        &mut self,
        all: bool,
        source: &mut Source<R>,
        state: &mut State,
    ) -> Result<Option<Refused>, serde_json::Error> {
        let Some(results) = &self.results else {
            return Ok(None);
        };
        while !self.sent.is_empty() {
            let made = match self.early.remove(&self.next) {
                Some(made) => made,
                None => {
                    let wait = all || self.flying > self.plan.in_flight;
                    let got = match wait {
                        true => results.recv().map_err(|_| ()),
                        false => match results.try_recv() {
                            Ok(got) => Ok(got),
                            Err(mpsc::TryRecvError::Empty) => return Ok(None),
                            Err(mpsc::TryRecvError::Disconnected) => Err(()),
                        },
                    };
                    let Ok((seq, made)) = got else {
                        return Err(stopped());
                    };
                    if seq != self.next {
                        // A batch dropped after a refused element is never filed.
                        if seq > self.next {
                            self.early.insert(seq, made);
                        }
                        continue;
                    }
                    made
                }
            };
            let (bytes, spans) = self.sent.pop_front().unwrap_or_default();
            self.next += 1;
            self.flying = self.flying.saturating_sub(bytes);
            let Ok(pieces) = made else {
                return Err(stopped());
            };
            for (piece, span) in pieces.into_iter().zip(&spans) {
                match piece {
                    Some(piece) => file(piece, *span, source, state, &mut self.filed)?,
                    None => {
                        self.drop_rest();
                        return Ok(Some(refused(*span)));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Drops everything in flight after a refused element: it is split again after it.
    fn drop_rest(&mut self) {
        self.next = self.seq;
        self.sent.clear();
        self.early.clear();
        self.batch = Job::default();
        self.spans.clear();
        self.flying = 0;
    }
}

/// Files a piece in its turn, the mark after it, counting it in `filed`.
fn file<R: Read>(
    piece: Piece,
    span: Span,
    source: &mut Source<R>,
    state: &mut State,
    filed: &mut usize,
) -> Result<(), serde_json::Error> {
    if state.apply(piece).is_err() {
        return Err(serde_json::Error::custom(
            "the kept comments are over the cap",
        ));
    }
    *filed += 1;
    source.mark(span.end);
    Ok(())
}

fn refused(span: Span) -> Refused {
    Refused {
        lead: span.lead,
        closed: span.closed,
    }
}

/// The error when a worker stopped (it panicked).
fn stopped() -> serde_json::Error {
    serde_json::Error::custom("a thread decoding the list stopped")
}

/// A worker's batch: each element in order, up to the first refused.
fn decode(job: &Job, filter: &Filter, work: Work) -> Vec<Option<Piece>> {
    let mut made = Vec::with_capacity(job.elements.len());
    for &(from, to, closed) in &job.elements {
        let piece = job
            .bytes
            .get(from..to)
            .and_then(|b| work(b, closed, filter, None));
        let refused = piece.is_none();
        made.push(piece);
        if refused {
            break;
        }
    }
    made
}
