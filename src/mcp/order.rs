//! One client's tool calls for one session run one at a time, in the order they arrived.
//!
//! rmcp runs each request in a task of its own, so two `checkpoint` calls a client sends back to
//! back could be posted in either order, the second without the first as its `Parent:` (one
//! client seen as two writers). The line gate (`lines.rs`) sees the lines in arrival order: for
//! each `tools/call` whose arguments name an `agent` and a `session` it takes a ticket in that
//! session's queue, keyed by the request id. The server's `call_tool` waits for its ticket's turn
//! ([`Order::turn`]) and gives the turn on when its [`Turn`] drops (finished, failed or
//! cancelled: a ticket dropped while waiting is skipped). Calls for other sessions, and calls
//! naming no session, never wait.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::sync::Notify;

type Key = (String, String);

/// The queues of every session this client's calls named.
#[derive(Debug, Default)]
pub struct Order {
    state: Mutex<State>,
    moved: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// Tickets taken on arrival and not yet claimed by the server, by JSON-RPC id (as JSON text).
    tickets: HashMap<String, (Key, u64)>,
    /// Each session's queue: its tickets not yet done, claimed or not, in arrival order. The
    /// first one's call runs; a ticket dropped before its turn simply leaves the queue.
    queues: HashMap<Key, BTreeSet<u64>>,
    /// The number of tickets taken so far (the next ticket).
    issued: u64,
}

/// A call's place in its session's queue; dropping it gives the turn on.
#[derive(Debug)]
pub struct Turn {
    order: Arc<Order>,
    key: Key,
    ticket: u64,
}

impl Order {
    /// A line the gate forwards to rmcp, in arrival order: takes a ticket when it is a
    /// `tools/call` with an id and arguments naming a string `agent` and `session`.
    pub fn arrived(&self, line: &[u8]) {
        let Some((id, key)) = ticket_of(line) else {
            return;
        };
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let ticket = state.issued;
        state.issued += 1;
        state.queues.entry(key.clone()).or_default().insert(ticket);
        // An id sent twice: the earlier ticket will never be claimed.
        if let Some((old_key, old)) = state.tickets.insert(id, (key, ticket)) {
            state.drop_ticket(&old_key, old);
        }
    }

    /// Waits for the turn of the call with JSON-RPC id `id` (as JSON text), when the gate gave
    /// it a ticket; `None` (no wait) otherwise.
    pub async fn turn(self: &Arc<Self>, id: &str) -> Option<Turn> {
        let (key, ticket) = {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.tickets.remove(id)?
        };
        let turn = Turn {
            order: self.clone(),
            key,
            ticket,
        };
        loop {
            let moved = self.moved.notified();
            tokio::pin!(moved);
            moved.as_mut().enable();
            if self
                .first(&turn.key)
                .is_none_or(|first| first >= turn.ticket)
            {
                return Some(turn);
            }
            moved.await;
        }
    }

    fn first(&self, key: &Key) -> Option<u64> {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.queues.get(key)?.first().copied()
    }
}

/// The JSON-RPC id (as JSON text) and the agent and session of a `tools/call` that names them.
fn ticket_of(line: &[u8]) -> Option<(String, Key)> {
    if !line.windows(10).any(|w| w == b"tools/call") {
        return None;
    }
    let message = serde_json::from_slice::<Value>(line).ok()?;
    let call = message.get("method")?.as_str()? == "tools/call";
    let named = message.pointer("/params/name")?.is_string();
    let args = message.pointer("/params/arguments")?.as_object()?;
    let agent = args.get("agent")?.as_str()?.to_string();
    let session = args.get("session")?.as_str()?.to_string();
    let id = message.get("id")?.to_string();
    (call && named).then_some((id, (agent, session)))
}

impl State {
    fn drop_ticket(&mut self, key: &Key, ticket: u64) {
        if let Some(queue) = self.queues.get_mut(key) {
            queue.remove(&ticket);
            if queue.is_empty() {
                self.queues.remove(key);
            }
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        {
            let mut state = self.order.state.lock().unwrap_or_else(|e| e.into_inner());
            state.drop_ticket(&self.key, self.ticket);
        }
        self.order.moved.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: u64, session: &str) -> Vec<u8> {
        serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "checkpoint",
                       "arguments": {"agent": "w", "session": session, "phase": "p"}}})
        .to_string()
        .into_bytes()
    }

    #[tokio::test]
    async fn turns_follow_arrival_and_a_dropped_ticket_is_skipped() {
        let order = Arc::new(Order::default());
        for id in 1..=3 {
            order.arrived(&call(id, "s"));
        }
        order.arrived(&call(9, "other"));
        // Another session never waits; neither does a call with no ticket.
        assert!(order.turn("9").await.is_some());
        assert!(order.turn("42").await.is_none());
        let second = tokio::spawn({
            let order = order.clone();
            async move { order.turn("2").await.map(|t| t.ticket) }
        });
        let first = order.turn("1").await.unwrap();
        tokio::task::yield_now().await;
        assert!(!second.is_finished(), "the second waits for the first");
        // The third is claimed and dropped while it waits: the queue goes past it.
        let third = tokio::spawn({
            let order = order.clone();
            async move { order.turn("3").await.map(|t| t.ticket) }
        });
        tokio::task::yield_now().await;
        third.abort();
        let _ = third.await;
        drop(first);
        assert_eq!(second.await.unwrap(), Some(1));
        assert!(order.state.lock().unwrap().queues.is_empty(), "{order:?}");
    }
}
