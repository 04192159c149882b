//! Seats and queues. Every limited level owns its nominal seats; seats it may lend are used
//! by other levels while it leaves them idle, and are its own again as soon as their
//! borrowers finish. Requests that find no seat wait in one of their flow's queues (dealt by
//! shuffle sharding) and leave them by fair queuing: the queue that has had the fewest
//! seat-seconds goes first.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use crate::config::LevelConfig;
use crate::metrics::FlowSeries;

/// What the dump pages show of a waiting request.
#[derive(Debug, Clone)]
pub(crate) struct RequestSummary {
    pub schema: Arc<str>,
    pub distinguisher: String,
    pub user: String,
    pub verb: String,
    pub path: String,
}

/// A request waiting for seats.
pub(crate) struct Waiter {
    pub id: u64,
    pub width: u32,
    pub arrived: Instant,
    pub tx: oneshot::Sender<Grant>,
    pub series: Arc<FlowSeries>,
    pub summary: RequestSummary,
}

/// Seats given to a waiting request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grant {
    pub borrowed: bool,
    pub virtual_cost: f64,
}

/// One queue of a level.
#[derive(Default)]
pub(crate) struct Queue {
    pub waiting: VecDeque<Waiter>,
    /// Seat-seconds (virtual) this queue's requests have been given.
    pub virtual_finish: f64,
    pub executing_requests: u32,
    pub executing_seats: u32,
}

impl Queue {
    fn waiting_seats(&self) -> u32 {
        self.waiting.iter().map(|w| w.width).sum()
    }
}

/// Counters shown by the dump pages.
#[derive(Default, Clone, Copy)]
pub(crate) struct LevelCounters {
    pub dispatched: u64,
    pub rejected: u64,
    pub timed_out: u64,
    pub cancelled: u64,
}

/// A level's live state.
pub(crate) struct Level {
    pub config: LevelConfig,
    /// Seats in use out of the level's nominal ones.
    pub own: u32,
    /// Seats in use borrowed from other levels.
    pub borrowed: u32,
    pub executing_requests: u32,
    pub queues: Vec<Queue>,
    pub waiting: usize,
    /// The virtual time new activity starts from.
    pub virtual_now: f64,
    /// Average seconds a request holds its seats.
    pub service_estimate: f64,
    pub counters: LevelCounters,
    /// Left over from an older configuration: kept until its requests are done.
    pub retired: bool,
}

impl Level {
    fn new(config: LevelConfig) -> Self {
        let queues = config.queuing.map_or(1, |q| q.queues as usize);
        Level {
            config,
            own: 0,
            borrowed: 0,
            executing_requests: 0,
            queues: (0..queues).map(|_| Queue::default()).collect(),
            waiting: 0,
            virtual_now: 0.0,
            service_estimate: 0.001,
            counters: LevelCounters::default(),
            retired: false,
        }
    }

    /// Seats this level leaves idle that others may borrow.
    fn idle_lendable(&self) -> u32 {
        self.config
            .lendable
            .min(self.config.nominal.saturating_sub(self.own))
    }

    /// The widest a request of this level may be: its nominal seats (what it can always get
    /// back), so that a wide request never waits for seats the level cannot have.
    pub fn max_width(&self) -> u32 {
        self.config.nominal.max(1)
    }

    /// The queue a request of flow `hash` joins: of the queues dealt to the flow, the one
    /// with the least work, waiting and executing.
    pub fn choose_queue(&self, hash: u64) -> usize {
        let Some(q) = self.config.queuing else {
            return 0;
        };
        let deck = self.queues.len() as u32;
        let mut hand = [0usize; MAX_HAND];
        deal(hash, deck, q.hand_size, &mut hand)
            .iter()
            .copied()
            .min_by_key(|&i| {
                let queue = &self.queues[i];
                queue.waiting_seats() + queue.executing_seats
            })
            .unwrap_or(0)
    }
}

/// The most cards a hand may hold: 60 bits of hash spent at one bit or more a card.
const MAX_HAND: usize = 64;

/// Deals `hand` distinct queues out of `deck` from the entropy in `hash`, into `out`
/// (returned as the dealt part).
pub(crate) fn deal(mut hash: u64, deck: u32, hand: u32, out: &mut [usize; MAX_HAND]) -> &[usize] {
    let hand = (hand as usize).min(MAX_HAND).min(deck as usize);
    // The cards dealt so far, in ascending order, to map each new card past them.
    let mut sorted = [0usize; MAX_HAND];
    for (i, slot) in out.iter_mut().enumerate().take(hand) {
        let remaining = u64::from(deck) - i as u64;
        let mut card = (hash % remaining) as usize;
        hash /= remaining;
        // The card-th queue not yet dealt.
        let mut at = 0;
        while at < i && sorted[at] <= card {
            card += 1;
            at += 1;
        }
        sorted.copy_within(at..i, at + 1);
        sorted[at] = card;
        *slot = card;
    }
    &out[..hand]
}

/// All levels' seats, under one lock: lending ties them together.
#[derive(Default)]
pub(crate) struct Dispatch {
    pub levels: HashMap<Arc<str>, Level>,
}

impl Dispatch {
    /// Installs a new configuration's levels; levels no longer configured keep running
    /// their requests and are dropped when idle.
    pub fn configure(&mut self, levels: &[LevelConfig]) {
        for level in self.levels.values_mut() {
            level.retired = true;
        }
        for config in levels {
            match self.levels.get_mut(&config.name) {
                Some(level) => {
                    level.retired = false;
                    let queues = config.queuing.map_or(1, |q| q.queues as usize);
                    if queues != level.queues.len() {
                        let old = std::mem::take(&mut level.queues);
                        level.queues = (0..queues).map(|_| Queue::default()).collect();
                        for (i, queue) in old.into_iter().enumerate() {
                            let target = &mut level.queues[i % queues];
                            target.waiting.extend(queue.waiting);
                        }
                    }
                    level.config = config.clone();
                }
                None => {
                    self.levels
                        .insert(config.name.clone(), Level::new(config.clone()));
                }
            }
        }
        self.levels
            .retain(|_, l| !l.retired || l.executing_requests > 0 || l.waiting > 0);
    }

    /// Takes `width` seats for `level`, if free now: `Some(borrowed)`.
    pub fn try_take(&mut self, name: &str, width: u32) -> Option<bool> {
        let level = self.levels.get_mut(name)?;
        if level.config.exempt {
            return Some(false);
        }
        let nominal = level.config.nominal;
        let guaranteed = nominal - level.config.lendable.min(nominal);
        // Seats nobody else may use: no need to look at the other levels.
        if level.own + width <= guaranteed {
            level.own += width;
            return Some(false);
        }
        let (idle_elsewhere, borrowed_total) = self
            .levels
            .iter()
            .filter(|(n, _)| &***n != name)
            .fold((0u32, 0u32), |(idle, borrowed), (_, l)| {
                (idle + l.idle_lendable(), borrowed + l.borrowed)
            });
        let level = self.levels.get_mut(name)?;
        let borrowed_total = borrowed_total + level.borrowed;
        if level.own + width <= nominal {
            // Its lendable seats: free unless lent out.
            let idle_after = level.config.lendable.min(nominal - level.own - width);
            if borrowed_total <= idle_elsewhere + idle_after {
                level.own += width;
                return Some(false);
            }
        }
        let within_limit = level
            .config
            .borrow_limit
            .is_none_or(|b| level.borrowed + width <= b);
        if within_limit && borrowed_total + width <= idle_elsewhere {
            level.borrowed += width;
            return Some(true);
        }
        None
    }

    /// Gives back seats taken by [`Self::try_take`].
    pub fn give_back(&mut self, name: &str, width: u32, borrowed: bool) {
        if let Some(level) = self.levels.get_mut(name) {
            if level.config.exempt {
                return;
            }
            if borrowed {
                level.borrowed = level.borrowed.saturating_sub(width);
            } else {
                level.own = level.own.saturating_sub(width);
            }
        }
    }

    /// Starts the execution of a request of `width` from `queue`: its accounting and the
    /// fair-queuing charge; the virtual cost charged.
    pub fn start(&mut self, name: &str, queue: usize, width: u32) -> f64 {
        let Some(level) = self.levels.get_mut(name) else {
            return 0.0;
        };
        level.executing_requests += 1;
        level.counters.dispatched += 1;
        let cost = f64::from(width) * level.service_estimate;
        if let Some(q) = level.queues.get_mut(queue) {
            q.executing_requests += 1;
            q.executing_seats += width;
            let begin = q.virtual_finish.max(level.virtual_now);
            q.virtual_finish = begin + cost;
            level.virtual_now = begin;
        }
        cost
    }

    /// Ends an execution started by [`Self::start`]: the queue's charge corrected by the real
    /// duration.
    pub fn finish(
        &mut self,
        name: &str,
        queue: usize,
        width: u32,
        borrowed: bool,
        charged: f64,
        ran: Duration,
    ) {
        self.give_back(name, width, borrowed);
        let Some(level) = self.levels.get_mut(name) else {
            return;
        };
        level.executing_requests = level.executing_requests.saturating_sub(1);
        let seconds = ran.as_secs_f64();
        level.service_estimate = 0.9 * level.service_estimate + 0.1 * seconds;
        if let Some(q) = level.queues.get_mut(queue) {
            q.executing_requests = q.executing_requests.saturating_sub(1);
            q.executing_seats = q.executing_seats.saturating_sub(width);
            q.virtual_finish += f64::from(width) * seconds - charged;
        }
        if level.retired && level.executing_requests == 0 && level.waiting == 0 {
            self.levels.remove(name);
        }
    }

    /// Hands free seats to waiting requests, fairest queue first, on every level that has
    /// any (seats freed on one level may be lent to another).
    pub fn dispatch_waiting(&mut self) {
        let names: Vec<Arc<str>> = self
            .levels
            .iter()
            .filter(|(_, l)| l.waiting > 0)
            .map(|(n, _)| n.clone())
            .collect();
        for name in names {
            while let Some(level) = self.levels.get(&name) {
                let Some((queue, width)) = level
                    .queues
                    .iter()
                    .enumerate()
                    .filter_map(|(i, q)| q.waiting.front().map(|w| (i, w.width, q.virtual_finish)))
                    .min_by(|a, b| a.2.total_cmp(&b.2))
                    .map(|(i, w, _)| (i, w))
                else {
                    break;
                };
                let Some(borrowed) = self.try_take(&name, width) else {
                    break;
                };
                let level = self.levels.get_mut(&name).expect("the level just read");
                let waiter = level.queues[queue]
                    .waiting
                    .pop_front()
                    .expect("the queue just read");
                level.waiting -= 1;
                waiter.series.inqueue.dec();
                let virtual_cost = self.start(&name, queue, width);
                let grant = Grant {
                    borrowed,
                    virtual_cost,
                };
                if waiter.tx.send(grant).is_err() {
                    // The request went away in the meantime.
                    self.finish(&name, queue, width, borrowed, virtual_cost, Duration::ZERO);
                    if let Some(level) = self.levels.get_mut(&name) {
                        level.counters.dispatched -= 1;
                    }
                } else {
                    waiter.series.dispatched.inc();
                    waiter.series.executing.inc();
                    waiter.series.executing_seats.inc_by(i64::from(width));
                    waiter
                        .series
                        .waited
                        .observe(waiter.arrived.elapsed().as_secs_f64());
                }
            }
        }
    }

    /// Removes a waiting request (timed out or gone); whether it was still waiting.
    pub fn withdraw(&mut self, name: &str, queue: usize, id: u64) -> Option<Waiter> {
        let level = self.levels.get_mut(name)?;
        let q = level.queues.get_mut(queue)?;
        let at = q.waiting.iter().position(|w| w.id == id)?;
        let waiter = q.waiting.remove(at)?;
        level.waiting -= 1;
        waiter.series.inqueue.dec();
        Some(waiter)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(name: &str, nominal: u32, lendable: u32, borrow: Option<u32>) -> LevelConfig {
        LevelConfig {
            name: name.into(),
            uid: "".into(),
            exempt: false,
            shares: 1,
            nominal,
            lendable,
            borrow_limit: borrow,
            queuing: None,
        }
    }

    #[test]
    fn deals_distinct_queues_spread_over_the_deck() {
        let mut seen = vec![0u32; 64];
        for hash in 0..2000u64 {
            let mut out = [0usize; MAX_HAND];
            let hand = deal(hash.wrapping_mul(0x9e37_79b9_7f4a_7c15), 64, 6, &mut out).to_vec();
            let mut sorted = hand.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 6, "{hand:?}");
            assert!(hand.iter().all(|&q| q < 64));
            for q in hand {
                seen[q] += 1;
            }
        }
        // 12,000 cards over 64 queues: every queue gets a fair part.
        assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
    }

    #[test]
    fn idle_lendable_seats_are_borrowed_and_returned_to_their_owner() {
        let mut d = Dispatch::default();
        d.configure(&[limited("a", 4, 2, None), limited("b", 2, 0, Some(2))]);
        // b: its 2 own seats, then 2 borrowed from a's lendable ones.
        assert_eq!(d.try_take("b", 1), Some(false));
        assert_eq!(d.try_take("b", 1), Some(false));
        assert_eq!(d.try_take("b", 1), Some(true));
        assert_eq!(d.try_take("b", 1), Some(true));
        // Its borrowing limit.
        assert_eq!(d.try_take("b", 1), None);
        // a keeps its 2 guaranteed seats; the lent ones are not there.
        assert_eq!(d.try_take("a", 1), Some(false));
        assert_eq!(d.try_take("a", 1), Some(false));
        assert_eq!(d.try_take("a", 1), None);
        // Returned by b, they are a's again.
        d.give_back("b", 1, true);
        assert_eq!(d.try_take("a", 1), Some(false));
        assert_eq!(d.try_take("a", 1), None);
    }

    #[test]
    fn a_level_that_lends_nothing_is_never_borrowed_from() {
        let mut d = Dispatch::default();
        d.configure(&[limited("a", 3, 0, None), limited("b", 1, 0, None)]);
        assert_eq!(d.try_take("b", 1), Some(false));
        assert_eq!(d.try_take("b", 1), None);
        for _ in 0..3 {
            assert_eq!(d.try_take("a", 1), Some(false));
        }
        assert_eq!(d.try_take("a", 1), None);
    }
}
