//! The `/debug/api_priority_and_fairness/dump_*` pages: one line per level, queue or waiting
//! request, comma separated under a header line, as upstream prints them.

use std::fmt::Write;

use crate::dispatch::Dispatch;

fn sorted(d: &Dispatch) -> Vec<(&str, &crate::dispatch::Level)> {
    let mut levels: Vec<_> = d.levels().collect();
    levels.sort_by_key(|(n, _)| *n);
    levels
}

pub(crate) fn priority_levels(d: &Dispatch) -> String {
    let mut out = String::from(
        "PriorityLevelName, ActiveQueues, IsIdle, IsQuiescing, WaitingRequests, \
         ExecutingRequests, DispatchedRequests, RejectedRequests, TimedoutRequests, \
         CancelledRequests\n",
    );
    for (name, l) in sorted(d) {
        let active = l
            .queues
            .iter()
            .filter(|q| !q.waiting.is_empty() || q.executing_requests > 0)
            .count();
        let c = l.counters;
        let _ = writeln!(
            out,
            "{name}, {active}, {}, {}, {}, {}, {}, {}, {}, {}",
            l.waiting == 0 && l.executing_requests == 0,
            l.retired,
            l.waiting,
            l.executing_requests,
            c.dispatched,
            c.rejected,
            c.timed_out,
            c.cancelled,
        );
    }
    out
}

pub(crate) fn queues(d: &Dispatch) -> String {
    let mut out = String::from(
        "PriorityLevelName, Index, PendingRequests, ExecutingRequests, SeatsInUse, \
         NextDispatchR\n",
    );
    for (name, l) in sorted(d) {
        if l.config.exempt {
            continue;
        }
        for (i, q) in l.queues.iter().enumerate() {
            let _ = writeln!(
                out,
                "{name}, {i}, {}, {}, {}, {:.8}ss",
                q.waiting.len(),
                q.executing_requests,
                q.executing_seats,
                q.virtual_finish,
            );
        }
    }
    out
}

pub(crate) fn requests(d: &Dispatch, details: bool) -> String {
    let mut out = String::from(
        "PriorityLevelName, FlowSchemaName, QueueIndex, RequestIndexInQueue, \
         FlowDistingsher, ArriveTime, InitialSeats",
    );
    out.push_str(if details {
        ", UserName, Verb, APIPath\n"
    } else {
        "\n"
    });
    let now = jiff::Timestamp::now();
    for (name, l) in sorted(d) {
        for (qi, q) in l.queues.iter().enumerate() {
            for (ri, w) in q.waiting.iter().enumerate() {
                let arrived = jiff::SignedDuration::try_from(w.arrived.elapsed())
                    .ok()
                    .and_then(|ago| now.checked_sub(ago).ok())
                    .unwrap_or(now);
                let s = &w.summary;
                let _ = write!(
                    out,
                    "{name}, {}, {qi}, {ri}, {}, {arrived}, {}",
                    s.schema, s.distinguisher, w.width
                );
                if details {
                    let _ = write!(out, ", {}, {}, {}", s.user, s.verb, s.path);
                }
                out.push('\n');
            }
        }
    }
    out
}
