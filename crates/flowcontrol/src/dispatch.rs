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
        let mut hand = [0u32; MAX_HAND];
        deal(hash, deck, q.hand_size, &mut hand)
            .iter()
            .map(|&i| i as usize)
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
pub(crate) fn deal(mut hash: u64, deck: u32, hand: u32, out: &mut [u32; MAX_HAND]) -> &[u32] {
    let hand = (hand as usize).min(MAX_HAND).min(deck as usize);
    // The cards dealt so far, in ascending order, to map each new card past them.
    let mut sorted = [0u32; MAX_HAND];
    for (i, slot) in out.iter_mut().enumerate().take(hand) {
        let remaining = u64::from(deck) - i as u64;
        let mut card = (hash % remaining) as u32;
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

/// All levels' seats, under one lock: lending ties them together. Levels sit in slots that
/// stay put while any request refers to them, so that a request's seats are found again
/// without looking its level up by name.
#[derive(Default)]
pub(crate) struct Dispatch {
    slots: Vec<Option<Level>>,
    by_name: HashMap<Arc<str>, usize>,
    /// Requests waiting on all levels.
    waiting: usize,
}

impl Dispatch {
    /// Installs a new configuration's levels, returning the slot of each; levels no longer
    /// configured keep running their requests and are dropped when idle.
    pub fn configure(&mut self, levels: &[LevelConfig]) -> Vec<usize> {
        for level in self.slots.iter_mut().flatten() {
            level.retired = true;
        }
        let mut placed = Vec::with_capacity(levels.len());
        for config in levels {
            let slot = match self.by_name.get(&config.name) {
                Some(&slot) => {
                    let level = self.slots[slot].as_mut().expect("a named slot is taken");
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
                    slot
                }
                None => {
                    let level = Some(Level::new(config.clone()));
                    let slot = match self.slots.iter().position(Option::is_none) {
                        Some(free) => {
                            self.slots[free] = level;
                            free
                        }
                        None => {
                            self.slots.push(level);
                            self.slots.len() - 1
                        }
                    };
                    self.by_name.insert(config.name.clone(), slot);
                    slot
                }
            };
            placed.push(slot);
        }
        for slot in 0..self.slots.len() {
            self.drop_if_done(slot);
        }
        placed
    }

    /// The slot of `config`'s level: `hint` (from the configuration `config` belongs to)
    /// unless the configuration has changed since.
    pub fn slot_of(&self, config: &LevelConfig, hint: usize) -> Option<usize> {
        match self.level(hint) {
            Some(level) if Arc::ptr_eq(&level.config.name, &config.name) => Some(hint),
            _ => self.by_name.get(&config.name).copied(),
        }
    }

    /// The level in `slot`.
    pub fn level(&self, slot: usize) -> Option<&Level> {
        self.slots.get(slot)?.as_ref()
    }

    /// The level in `slot`, to change.
    pub fn level_mut(&mut self, slot: usize) -> Option<&mut Level> {
        self.slots.get_mut(slot)?.as_mut()
    }

    /// Every level, with its name.
    pub fn levels(&self) -> impl Iterator<Item = (&str, &Level)> {
        self.slots.iter().flatten().map(|l| (&*l.config.name, l))
    }

    /// A retired level's slot is freed once its last request is done.
    fn drop_if_done(&mut self, slot: usize) {
        let Some(level) = self.level(slot) else {
            return;
        };
        if level.retired && level.executing_requests == 0 && level.waiting == 0 {
            let name = level.config.name.clone();
            self.slots[slot] = None;
            if self.by_name.get(&name) == Some(&slot) {
                self.by_name.remove(&name);
            }
        }
    }

    /// Takes `width` seats for the level in `slot`, if free now: `Some(borrowed)`.
    pub fn try_take(&mut self, slot: usize, width: u32) -> Option<bool> {
        let level = self.level_mut(slot)?;
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
            .slots
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != slot)
            .filter_map(|(_, l)| l.as_ref())
            .fold((0u32, 0u32), |(idle, borrowed), l| {
                (idle + l.idle_lendable(), borrowed + l.borrowed)
            });
        let level = self.level_mut(slot)?;
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
    pub fn give_back(&mut self, slot: usize, width: u32, borrowed: bool) {
        if let Some(level) = self.level_mut(slot) {
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
    pub fn start(&mut self, slot: usize, queue: usize, width: u32) -> f64 {
        let Some(level) = self.level_mut(slot) else {
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
        slot: usize,
        queue: usize,
        width: u32,
        borrowed: bool,
        charged: f64,
        ran: Duration,
    ) {
        self.give_back(slot, width, borrowed);
        let Some(level) = self.level_mut(slot) else {
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
        if level.retired {
            self.drop_if_done(slot);
        }
    }

    /// Puts `waiter` in `queue` of the level in `slot`.
    pub fn enqueue(&mut self, slot: usize, queue: usize, waiter: Waiter) {
        let Some(level) = self.level_mut(slot) else {
            return;
        };
        let q = &mut level.queues[queue];
        if q.waiting.is_empty() && q.executing_requests == 0 {
            // A queue coming back to life starts at the present, not its old credit.
            q.virtual_finish = q.virtual_finish.max(level.virtual_now);
        }
        waiter.series.inqueue.inc();
        q.waiting.push_back(waiter);
        level.waiting += 1;
        self.waiting += 1;
    }

    /// Hands free seats to waiting requests, fairest queue first, on every level that has
    /// any (seats freed on one level may be lent to another).
    pub fn dispatch_waiting(&mut self) {
        if self.waiting == 0 {
            return;
        }
        for slot in 0..self.slots.len() {
            while let Some(level) = self.level(slot).filter(|l| l.waiting > 0) {
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
                let Some(borrowed) = self.try_take(slot, width) else {
                    break;
                };
                let level = self.level_mut(slot).expect("the level just read");
                let waiter = level.queues[queue]
                    .waiting
                    .pop_front()
                    .expect("the queue just read");
                level.waiting -= 1;
                self.waiting -= 1;
                waiter.series.inqueue.dec();
                let virtual_cost = self.start(slot, queue, width);
                let grant = Grant {
                    borrowed,
                    virtual_cost,
                };
                if waiter.tx.send(grant).is_err() {
                    // The request went away in the meantime.
                    self.finish(slot, queue, width, borrowed, virtual_cost, Duration::ZERO);
                    if let Some(level) = self.level_mut(slot) {
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
    pub fn withdraw(&mut self, slot: usize, queue: usize, id: u64) -> Option<Waiter> {
        let level = self.level_mut(slot)?;
        let q = level.queues.get_mut(queue)?;
        let at = q.waiting.iter().position(|w| w.id == id)?;
        let waiter = q.waiting.remove(at)?;
        level.waiting -= 1;
        let retired = level.retired;
        self.waiting -= 1;
        waiter.series.inqueue.dec();
        if retired {
            self.drop_if_done(slot);
        }
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
            let mut out = [0u32; MAX_HAND];
            let hand = deal(hash.wrapping_mul(0x9e37_79b9_7f4a_7c15), 64, 6, &mut out).to_vec();
            let mut sorted = hand.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(sorted.len(), 6, "{hand:?}");
            assert!(hand.iter().all(|&q| q < 64));
            for q in hand {
                seen[q as usize] += 1;
            }
        }
        // 12,000 cards over 64 queues: every queue gets a fair part.
        assert!(seen.iter().all(|&n| n > 100), "{seen:?}");
    }

    #[test]
    fn idle_lendable_seats_are_borrowed_and_returned_to_their_owner() {
        let mut d = Dispatch::default();
        let &[a, b] = &d.configure(&[limited("a", 4, 2, None), limited("b", 2, 0, Some(2))])[..]
        else {
            panic!("two slots")
        };
        // b: its 2 own seats, then 2 borrowed from a's lendable ones.
        assert_eq!(d.try_take(b, 1), Some(false));
        assert_eq!(d.try_take(b, 1), Some(false));
        assert_eq!(d.try_take(b, 1), Some(true));
        assert_eq!(d.try_take(b, 1), Some(true));
        // Its borrowing limit.
        assert_eq!(d.try_take(b, 1), None);
        // a keeps its 2 guaranteed seats; the lent ones are not there.
        assert_eq!(d.try_take(a, 1), Some(false));
        assert_eq!(d.try_take(a, 1), Some(false));
        assert_eq!(d.try_take(a, 1), None);
        // Returned by b, they are a's again.
        d.give_back(b, 1, true);
        assert_eq!(d.try_take(a, 1), Some(false));
        assert_eq!(d.try_take(a, 1), None);
    }

    #[test]
    fn a_level_that_lends_nothing_is_never_borrowed_from() {
        let mut d = Dispatch::default();
        let &[a, b] = &d.configure(&[limited("a", 3, 0, None), limited("b", 1, 0, None)])[..]
        else {
            panic!("two slots")
        };
        assert_eq!(d.try_take(b, 1), Some(false));
        assert_eq!(d.try_take(b, 1), None);
        for _ in 0..3 {
            assert_eq!(d.try_take(a, 1), Some(false));
        }
        assert_eq!(d.try_take(a, 1), None);
    }

    #[test]
    fn a_retired_level_keeps_its_slot_until_its_last_request_is_done() {
        let mut d = Dispatch::default();
        let old = limited("a", 2, 0, None);
        let slots = d.configure(std::slice::from_ref(&old));
        let a = slots[0];
        assert_eq!(d.try_take(a, 1), Some(false));
        d.start(a, 0, 1);
        // Reconfigured without "a": it stays while its request runs; "b" gets a new slot.
        let b = d.configure(&[limited("b", 2, 0, None)])[0];
        assert_ne!(a, b);
        assert!(d.level(a).is_some_and(|l| l.retired));
        assert_eq!(d.slot_of(&old, a), Some(a));
        d.finish(a, 0, 1, false, 0.0, Duration::ZERO);
        assert!(d.level(a).is_none(), "freed when idle");
        assert_eq!(d.slot_of(&old, a), None);
        // A new level takes the free slot; a request classified by the old configuration
        // does not find its seats there.
        let c = d.configure(&[limited("b", 2, 0, None), limited("c", 2, 0, None)]);
        assert_eq!(c, vec![b, a]);
        assert_eq!(d.slot_of(&old, a), None);
        let b_config = limited("b", 2, 0, None);
        assert_eq!(d.slot_of(&b_config, 99), Some(b), "found by name");
    }
}
