//! Streaming a list answer into the element-by-element decoder (`forge/decode.rs`).
//!
//! [`ForgeClient::open`] sends a request (with the usual retries) and stops at the answer's
//! headers, so a caller can look at them (the server's clock) before reading on.
//! [`ForgeClient::decode_comments`] then feeds the body, chunk by chunk as it arrives, to the
//! decoder on a blocking thread: the raw answer is never held whole. `max_response_bytes` does
//! not bound these answers' size, only the body bytes kept (`Filter::max_kept`): what a
//! commenter the reader does not trust posts costs time to skip, never memory, and never fails
//! the read.

use std::io::{self, Read};

use reqwest::header::HeaderMap;
use reqwest::{Method, StatusCode};

use super::{ForgeClient, answer_kind, transport, worth_retrying};
use crate::forge::decode::{Failed, Filter, decode_list};
use crate::forge::error::{Call, ForgeError};
use crate::forge::models::CommentList;

/// A successful answer whose body is still to be read.
pub(crate) struct Opened {
    response: reqwest::Response,
    /// The answer's headers.
    pub headers: HeaderMap,
    call: Call,
}

impl ForgeClient {
    /// `GET path`, with retries, up to a `200` answer's headers. Any other final status is an
    /// error, as [`ForgeClient::send`] says it.
    pub async fn open(&self, path: &str, query: &[(&str, String)]) -> Result<Opened, ForgeError> {
        let mut retry = self.retry();
        loop {
            let result = match self.start(Method::GET, path, query, None).await {
                Ok((response, call)) if response.status() == StatusCode::OK => {
                    let headers = response.headers().clone();
                    self.note_clock(&headers);
                    return Ok(Opened {
                        response,
                        headers,
                        call,
                    });
                }
                Ok((response, call)) => self.finish(response, call).await,
                Err(e) => Err(e),
            };
            let retried = match worth_retrying(&result) {
                Some((after, why)) => retry.wait(after, &format!("GET /{path}"), &why).await,
                None => false,
            };
            if !retried {
                return Err(match result {
                    Ok(raw) => self.status_error(raw),
                    Err(e) => e,
                });
            }
        }
    }

    /// Reads an opened answer as a JSON array of comments, keeping what `filter` keeps, up to
    /// `max_response_bytes` of kept bodies (the filter's own `max_kept` is replaced). A
    /// connection that fails mid-answer is a transport error (worth a retry); bytes that are
    /// not such an array are a decode error.
    pub async fn decode_comments(
        &self,
        opened: Opened,
        filter: &Filter,
    ) -> Result<CommentList, ForgeError> {
        let Opened {
            response,
            headers,
            call,
        } = opened;
        let mut filter = filter.clone();
        filter.max_kept = self.max_response_bytes;
        let cap = filter.max_kept;
        let handle = tokio::runtime::Handle::current();
        let pace = self.wait().reading(call.to_string());
        let task = tokio::task::spawn_blocking(move || {
            let mut reader = Chunks {
                response,
                handle,
                chunk: Vec::new(),
                at: 0,
                read: 0,
                failed: None,
                stalled: false,
                pace,
                head: Vec::new(),
            };
            // The decoder reads in large pieces into its own buffer.
            let list = decode_list(&mut reader, &filter);
            (
                list,
                reader.failed,
                reader.stalled,
                reader.read,
                reader.head,
            )
        });
        let (list, failed, stalled, read, head) =
            task.await.map_err(|e| ForgeError::Transport {
                call: call.clone(),
                detail: format!("reading the answer stopped: {e}"),
                sent: true,
            })?;
        if stalled {
            // The body stopped flowing, came too slowly, or ran past the command's deadline.
            return Err(ForgeError::Timeout { call, sent: true });
        }
        if let Some(e) = failed {
            return Err(transport(call, e, true));
        }
        tracing::debug!(bytes = read, "{call}: read as it arrived");
        // The body is in whole: an answer, which renews a patient wait.
        self.wait().answered();
        match list {
            Ok(list) => match crate::forge::page::total_count(&headers) {
                // Both comment lists send every match in one answer, with `X-Total-Count`
                // equal to what they sent (ENDPOINTS.md §3.9, §3.10). Fewer elements than that
                // is a list cut short (a server or proxy that paginates it): never an answer
                // that silently lacks comments.
                Some(total) if total > list.seen as u64 => Err(ForgeError::Incomplete {
                    call,
                    seen: list.seen as u64,
                    total,
                }),
                total => Ok(CommentList { total, ..list }),
            },
            Err(Failed::OverCap) => Err(ForgeError::TooLarge { call, cap }),
            Err(Failed::Json(e)) => {
                // The beginning of what came instead (shown with -v), to tell a proxy or a
                // login page from the forge.
                tracing::debug!(
                    "{call}: the answer began: {}",
                    String::from_utf8_lossy(&head)
                );
                Err(ForgeError::Decode {
                    call,
                    detail: format!("{}{e}", answer_kind(&headers)),
                })
            }
        }
    }
}

/// The body of an answer as a blocking [`Read`], one chunk at a time. Runs on a blocking thread
/// (`Handle::block_on` waits for each chunk); the first transport failure is kept for the
/// caller, which words it as a failed request.
struct Chunks {
    response: reqwest::Response,
    handle: tokio::runtime::Handle,
    chunk: Vec<u8>,
    at: usize,
    read: u64,
    failed: Option<reqwest::Error>,
    /// The next chunk did not come within the wait rule's pace.
    stalled: bool,
    /// How long a chunk may take (the wait rule, `wait.rs`).
    pace: crate::forge::wait::Reading,
    /// The first [`HEAD_BYTES`] of the answer, for the message when it is not a comment list.
    head: Vec<u8>,
}

/// How much of an answer's beginning [`Chunks`] keeps for a message.
const HEAD_BYTES: usize = 512;

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.chunk.len() {
            if self.failed.is_some() || self.stalled {
                return Err(io::Error::other("the connection failed"));
            }
            let limit = self.pace.limit();
            let next = match limit.is_zero() {
                true => Err(()),
                false => self
                    .handle
                    .block_on(tokio::time::timeout(limit, self.response.chunk()))
                    .map_err(|_| ()),
            };
            let Ok(next) = next else {
                self.stalled = true;
                return Err(io::Error::other("the forge stopped sending the answer"));
            };
            match next {
                Ok(Some(chunk)) => {
                    self.pace.got(chunk.len());
                    let room = HEAD_BYTES.saturating_sub(self.head.len());
                    self.head.extend_from_slice(&chunk[..room.min(chunk.len())]);
                    self.chunk.clear();
                    self.chunk.extend_from_slice(&chunk);
                    self.at = 0;
                    self.read += chunk.len() as u64;
                }
                Ok(None) => return Ok(0),
                Err(e) => {
                    self.failed = Some(e);
                    return Err(io::Error::other("the connection failed"));
                }
            }
        }
        let n = buf.len().min(self.chunk.len() - self.at);
        buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}
