//! How memories strengthen and sink.
//!
//! Two models, selectable in configuration ([`DynamicsModel`]):
//!
//! * **ACT-R base-level activation** (seed B, the default). Every event `j` (create, recall
//!   hit, reinforce, …) leaves a trace `w_j · max(now − t_j, 60 s)^(−d)`; the memory's
//!   activation is the logistic of `ln Σ traces`, centred at −6.0 with scale 1.5. The decay
//!   exponent `d` falls with importance (important memories fade slower) and is shifted by
//!   the kind's [`DecayClass`]. Memories used often and recently stay strong.
//! * **Ebbinghaus strength** (seed A): `importance · e^(−λ·days) · (1 + 0.2·recalls)`,
//!   capped at 1, with λ by decay class slowed by importance.
//!
//! Both return a value in `[0, 1]` that the ranking ([`crate::scoring`]) weighs with
//! relevance and importance.

use crate::{DecayClass, EventKind, Millis};
use serde::{Deserialize, Serialize};

/// Which forgetting model drives the `activation` component of a recall score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DynamicsModel {
    /// Seed B's ACT-R base-level activation over the event log.
    #[default]
    Actr,
    /// Seed A's exponential strength from last access and recall count.
    Strength,
}

/// One entry of a memory's event log, as the dynamics see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Trace {
    pub at: Millis,
    pub weight: f64,
    /// What left the trace: the strength model counts only deliberate uses.
    pub kind: EventKind,
}

/// ACT-R parameters. Defaults are seed B's.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ActrParams {
    /// Events younger than this count as this old (B: 60 s), so a fresh memory is not infinite.
    pub min_elapsed_seconds: f64,
    /// Logistic centre for `ln S` (B: −6.0).
    pub center: f64,
    /// Logistic scale (B: 1.5).
    pub scale: f64,
    /// Create-event weight is `1 + create_alpha · importance` (B: 2.0, importance on 0–1).
    pub create_alpha: f64,
    /// Added to the decay exponent of durable kinds (negative: slower fading).
    pub shift_durable: f64,
    /// Added to the decay exponent of standard kinds. 0 keeps B's calibration exactly.
    pub shift_standard: f64,
    /// Added to the decay exponent of tentative kinds.
    pub shift_tentative: f64,
    /// Added to the decay exponent of volatile kinds.
    pub shift_volatile: f64,
}

impl Default for ActrParams {
    fn default() -> Self {
        Self {
            min_elapsed_seconds: 60.0,
            center: -6.0,
            scale: 1.5,
            create_alpha: 2.0,
            shift_durable: -0.05,
            shift_standard: 0.0,
            shift_tentative: 0.05,
            shift_volatile: 0.10,
        }
    }
}

impl ActrParams {
    fn shift(&self, class: DecayClass) -> f64 {
        match class {
            DecayClass::Durable => self.shift_durable,
            DecayClass::Standard => self.shift_standard,
            DecayClass::Tentative => self.shift_tentative,
            DecayClass::Volatile => self.shift_volatile,
        }
    }
}

/// B's decay exponent, `clamp(0.5 − 0.2·(i − 5)/5, 0.3, 0.6)` with `i` on 1–10, plus the
/// decay class's shift. The result is kept within `[0.1, 0.9]`.
pub fn decay_rate(importance: f64, class: DecayClass, p: &ActrParams) -> f64 {
    let i10 = importance.clamp(0.0, 1.0) * 10.0;
    let base = (0.5 - 0.2 * (i10 - 5.0) / 5.0).clamp(0.3, 0.6);
    (base + p.shift(class)).clamp(0.1, 0.9)
}

/// Weight of the create event: `1 + α·importance` (B: `1 + 2.0·i/10`).
pub fn create_weight(importance: f64, p: &ActrParams) -> f64 {
    1.0 + p.create_alpha * importance.clamp(0.0, 1.0)
}

/// The traces a memory starts with when it arrives without usage history (an import or
/// conversion from a source that never recorded use, such as seed C): its creation, and,
/// when it arrives later than it was created, an `import` access at `imported_at`.
/// Absence of usage data is not evidence of disuse: without the import access a memory
/// written a year ago and imported today would be archived by the next maintenance
/// (seed C users saw 116 of 122 converted memories archived), so its forgetting clock
/// starts at its import instead.
pub fn seed_traces(
    created_at: Millis,
    imported_at: Millis,
    importance: f64,
    p: &ActrParams,
) -> Vec<Trace> {
    let weight = create_weight(importance, p);
    let mut out = vec![Trace {
        at: created_at,
        weight,
        kind: EventKind::Create,
    }];
    if imported_at > created_at {
        out.push(Trace {
            at: imported_at,
            weight,
            kind: EventKind::Import,
        });
    }
    out
}

/// `ln Σ w_j · max(now − t_j, floor)^(−d)`, or `None` when there is no positive trace.
/// Events in the future count as `floor` old.
pub fn base_level(traces: &[Trace], now: Millis, d: f64, p: &ActrParams) -> Option<f64> {
    let floor = p.min_elapsed_seconds.max(1e-3);
    let sum: f64 = traces
        .iter()
        .filter(|t| t.weight > 0.0)
        .map(|t| {
            let age = ((now - t.at) as f64 / 1000.0).max(floor);
            t.weight * age.powf(-d)
        })
        .sum();
    (sum > 0.0).then(|| sum.ln())
}

/// Logistic normalisation of a base level into `(0, 1)`.
pub fn normalize(base: Option<f64>, p: &ActrParams) -> f64 {
    match base {
        None => 0.0,
        Some(b) => 1.0 / (1.0 + (-(b - p.center) / p.scale).exp()),
    }
}

/// ACT-R activation of a memory in `[0, 1]`.
pub fn actr_activation(
    traces: &[Trace],
    now: Millis,
    importance: f64,
    class: DecayClass,
    p: &ActrParams,
) -> f64 {
    let d = decay_rate(importance, class, p);
    normalize(base_level(traces, now, d, p), p)
}

/// Seed A's decay rates λ per day, by decay class (A's categories: strategy 0.10, fact 0.16,
/// assumption 0.20, failure 0.35).
pub fn strength_lambda(class: DecayClass) -> f64 {
    match class {
        DecayClass::Durable => 0.10,
        DecayClass::Standard => 0.16,
        DecayClass::Tentative => 0.20,
        DecayClass::Volatile => 0.35,
    }
}

/// Seed A's strength: `min(1, i · e^(−λ(1 − 0.8 i)·days) · (1 + 0.2·recalls))`.
pub fn strength(importance: f64, class: DecayClass, days_since_access: f64, recalls: u32) -> f64 {
    let i = importance.clamp(0.0, 1.0);
    let lambda = strength_lambda(class) * (1.0 - i * 0.8);
    let days = days_since_access.max(0.0);
    (i * (-lambda * days).exp() * (1.0 + f64::from(recalls) * 0.2)).min(1.0)
}

/// The activation component under the chosen model.
///
/// For [`DynamicsModel::Strength`] the last access is the newest deliberate use (create,
/// reinforce, correction, update) and each reinforce counts as a recall. Recall hits do
/// not: merely appearing in results must not keep a memory at full strength (A bumps only
/// on strong, deliberate use).
pub fn activation(
    model: DynamicsModel,
    traces: &[Trace],
    now: Millis,
    importance: f64,
    class: DecayClass,
    p: &ActrParams,
) -> f64 {
    match model {
        DynamicsModel::Actr => actr_activation(traces, now, importance, class, p),
        DynamicsModel::Strength => {
            let Some(last) = traces
                .iter()
                .filter(|t| t.kind != EventKind::RecallHit)
                .map(|t| t.at)
                .max()
            else {
                return 0.0;
            };
            let days = (now - last) as f64 / crate::DAY_MS as f64;
            let reinforces = traces
                .iter()
                .filter(|t| t.kind == EventKind::Reinforce)
                .count();
            let recalls = reinforces.min(u32::MAX as usize) as u32;
            strength(importance, class, days, recalls)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DAY_MS, EventKind};

    const NOW: Millis = 1_800_000_000_000;

    fn p() -> ActrParams {
        ActrParams::default()
    }

    fn created(ago: Millis, importance: f64) -> Vec<Trace> {
        vec![Trace {
            at: NOW - ago,
            weight: create_weight(importance, &p()),
            kind: EventKind::Create,
        }]
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    // B's calibration points (dynamics.py docstring), on the standard class, where the shift is 0.
    #[test]
    fn actr_just_created_is_about_095() {
        let a = actr_activation(&created(0, 0.5), NOW, 0.5, DecayClass::Standard, &p());
        assert!(close(a, 0.95, 0.02), "{a}");
    }

    #[test]
    fn actr_one_access_a_day_ago_is_about_055() {
        let t = [Trace {
            at: NOW - DAY_MS,
            weight: 1.0,
            kind: EventKind::Reinforce,
        }];
        let a = actr_activation(&t, NOW, 0.5, DecayClass::Standard, &p());
        assert!(close(a, 0.55, 0.02), "{a}");
    }

    #[test]
    fn actr_ninety_days_untouched() {
        let five = actr_activation(
            &created(90 * DAY_MS, 0.5),
            NOW,
            0.5,
            DecayClass::Standard,
            &p(),
        );
        let ten = actr_activation(
            &created(90 * DAY_MS, 1.0),
            NOW,
            1.0,
            DecayClass::Standard,
            &p(),
        );
        // B's docstring rounds these to ≈0.25 and ≈0.8; its formula gives 0.304 and 0.826.
        assert!(close(five, 0.304, 0.01), "importance 5: {five}");
        assert!(close(ten, 0.826, 0.01), "importance 10: {ten}");
        assert!(ten > five + 0.4);
    }

    #[test]
    fn actr_b_formula_pieces_are_exact() {
        let q = p();
        assert_eq!(decay_rate(0.5, DecayClass::Standard, &q), 0.5);
        assert!(close(decay_rate(1.0, DecayClass::Standard, &q), 0.3, 1e-12));
        assert!(close(decay_rate(0.0, DecayClass::Standard, &q), 0.6, 1e-12));
        assert!(close(
            decay_rate(0.3, DecayClass::Standard, &q),
            0.58,
            1e-12
        ));
        assert_eq!(create_weight(0.5, &q), 2.0);
        assert_eq!(create_weight(1.0, &q), 3.0);
        // 60 s floor: an event now and one 30 s ago weigh the same.
        let a = base_level(
            &[Trace {
                at: NOW,
                weight: 1.0,
                kind: EventKind::Reinforce,
            }],
            NOW,
            0.5,
            &q,
        );
        let b = base_level(
            &[Trace {
                at: NOW - 30_000,
                weight: 1.0,
                kind: EventKind::Reinforce,
            }],
            NOW,
            0.5,
            &q,
        );
        assert_eq!(a, b);
        // A future event counts as 60 s old, not as an error.
        let c = base_level(
            &[Trace {
                at: NOW + 10 * DAY_MS,
                weight: 1.0,
                kind: EventKind::Reinforce,
            }],
            NOW,
            0.5,
            &q,
        );
        assert_eq!(a, c);
        assert_eq!(normalize(None, &q), 0.0);
        assert!(close(normalize(Some(-6.0), &q), 0.5, 1e-12));
    }

    #[test]
    fn actr_frequency_and_recency_strengthen() {
        let one = created(30 * DAY_MS, 0.5);
        let mut many = one.clone();
        for k in 1..=5 {
            many.push(Trace {
                at: NOW - k * DAY_MS,
                weight: 1.0,
                kind: EventKind::Reinforce,
            });
        }
        let a1 = actr_activation(&one, NOW, 0.5, DecayClass::Standard, &p());
        let a2 = actr_activation(&many, NOW, 0.5, DecayClass::Standard, &p());
        assert!(a2 > a1 + 0.2, "{a1} -> {a2}");
    }

    #[test]
    fn decay_class_shifts_the_exponent() {
        let t = created(30 * DAY_MS, 0.5);
        let durable = actr_activation(&t, NOW, 0.5, DecayClass::Durable, &p());
        let standard = actr_activation(&t, NOW, 0.5, DecayClass::Standard, &p());
        let volatile = actr_activation(&t, NOW, 0.5, DecayClass::Volatile, &p());
        assert!(
            durable > standard && standard > volatile,
            "{durable} {standard} {volatile}"
        );
    }

    /// Days until strength at importance 0.5 with no recalls falls below A's prune threshold 0.05.
    fn horizon(class: DecayClass) -> f64 {
        let mut day = 0.0;
        while strength(0.5, class, day, 0) >= 0.05 {
            day += 0.01;
        }
        day
    }

    #[test]
    fn strength_horizons_match_seed_a() {
        let failure = horizon(DecayClass::Volatile);
        let strategy = horizon(DecayClass::Durable);
        let fact = horizon(DecayClass::Standard);
        let assumption = horizon(DecayClass::Tentative);
        assert!(close(failure, 11.0, 0.2), "failure {failure}");
        assert!(close(strategy, 38.4, 0.3), "strategy {strategy}");
        assert!(close(fact, 24.0, 0.3), "fact {fact}");
        assert!(close(assumption, 19.2, 0.3), "assumption {assumption}");
    }

    #[test]
    fn imported_memories_start_their_clock_at_import() {
        let year = 365 * DAY_MS;
        let traces = seed_traces(NOW - year, NOW, 0.5, &p());
        assert_eq!(traces.len(), 2);
        assert_eq!(traces[1].kind, EventKind::Import);
        let s = activation(
            DynamicsModel::Strength,
            &traces,
            NOW,
            0.5,
            DecayClass::Standard,
            &p(),
        );
        let old = activation(
            DynamicsModel::Strength,
            &traces[..1],
            NOW,
            0.5,
            DecayClass::Standard,
            &p(),
        );
        assert!(s > 0.4 && old < 0.05, "{s} {old}");
        assert_eq!(seed_traces(NOW, NOW, 0.5, &p()).len(), 1);
    }

    #[test]
    fn strength_recalls_and_cap() {
        assert_eq!(strength(1.0, DecayClass::Standard, 0.0, 10), 1.0);
        let a = strength(0.5, DecayClass::Standard, 5.0, 0);
        let b = strength(0.5, DecayClass::Standard, 5.0, 2);
        assert!(close(b / a, 1.4, 1e-9));
        // A critical failure fades like a default fact (A's note: λ 0.098 vs 0.096).
        let lam_crit = strength_lambda(DecayClass::Volatile) * (1.0 - 0.9 * 0.8);
        assert!(close(lam_crit, 0.098, 1e-9));
    }

    #[test]
    fn strength_model_through_activation() {
        let t = [
            Trace {
                at: NOW - 11 * DAY_MS,
                weight: 2.0,
                kind: EventKind::Create,
            },
            // Showing up in results is not a use: it neither refreshes nor strengthens.
            Trace {
                at: NOW - DAY_MS,
                weight: 0.3,
                kind: EventKind::RecallHit,
            },
        ];
        let s = activation(
            DynamicsModel::Strength,
            &t,
            NOW,
            0.5,
            DecayClass::Volatile,
            &p(),
        );
        assert!(close(s, 0.05, 0.005), "{s}");
        assert_eq!(
            activation(
                DynamicsModel::Strength,
                &[],
                NOW,
                0.5,
                DecayClass::Volatile,
                &p()
            ),
            0.0
        );
    }
}
