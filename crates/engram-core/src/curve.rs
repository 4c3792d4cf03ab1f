//! A memory's activation over time, for the web UI's curve: the value the dynamics gave
//! at each past moment (only the events that had happened by then count) and the decay
//! ahead if nothing else happens (every event so far, evaluated at future times).

use crate::dynamics::{self, ActrParams, DynamicsModel, Trace};
use crate::{DecayClass, Millis};
use serde::Serialize;

/// Largest number of points one curve may ask for.
pub const MAX_POINTS: usize = 1000;

/// One sample of the curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    pub at: Millis,
    pub activation: f64,
    /// After `now`: the decay projected with no further events.
    pub projected: bool,
}

/// What the curve is computed from: the memory's parameters and the model.
#[derive(Debug, Clone, Copy)]
pub struct CurveInput<'a> {
    pub model: DynamicsModel,
    pub traces: &'a [Trace],
    pub importance: f64,
    pub class: DecayClass,
    pub params: &'a ActrParams,
}

/// `points` samples evenly spaced from `from` to `to` (both included), with `now` itself
/// inserted so the curve meets the present exactly. A moment before the first event has
/// activation 0 (the memory did not exist yet).
pub fn activation_curve(
    input: &CurveInput<'_>,
    from: Millis,
    to: Millis,
    now: Millis,
    points: usize,
) -> Vec<CurvePoint> {
    let points = points.clamp(2, MAX_POINTS);
    let span = (to - from).max(1);
    let mut times: Vec<Millis> = (0..points)
        .map(|i| from + span * i as Millis / (points as Millis - 1))
        .collect();
    if (from..=to).contains(&now) && !times.contains(&now) {
        times.push(now);
        times.sort_unstable();
    }
    times
        .into_iter()
        .map(|at| {
            let seen: Vec<Trace> = input
                .traces
                .iter()
                .filter(|t| t.at <= at.min(now))
                .copied()
                .collect();
            let activation = if seen.is_empty() {
                0.0
            } else {
                dynamics::activation(
                    input.model,
                    &seen,
                    at,
                    input.importance,
                    input.class,
                    input.params,
                )
            };
            CurvePoint {
                at,
                activation,
                projected: at > now,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DAY_MS, EventKind};

    const NOW: Millis = 1_800_000_000_000;

    fn trace(at: Millis, kind: EventKind) -> Trace {
        Trace {
            at,
            weight: 1.0,
            kind,
        }
    }

    fn input<'a>(traces: &'a [Trace], params: &'a ActrParams) -> CurveInput<'a> {
        CurveInput {
            model: DynamicsModel::Actr,
            traces,
            importance: 0.5,
            class: DecayClass::Standard,
            params,
        }
    }

    #[test]
    fn zero_before_the_first_event_then_decays_ahead() {
        let traces = [trace(NOW - 10 * DAY_MS, EventKind::Create)];
        let c = activation_curve(
            &input(&traces, &ActrParams::default()),
            NOW - 20 * DAY_MS,
            NOW + 20 * DAY_MS,
            NOW,
            41,
        );
        assert_eq!(c.first().unwrap().activation, 0.0);
        let past: Vec<_> = c.iter().filter(|p| !p.projected).collect();
        let ahead: Vec<_> = c.iter().filter(|p| p.projected).collect();
        assert!(past.iter().any(|p| p.at == NOW), "the present is a point");
        assert!(!ahead.is_empty());
        // With no further events the projection only falls.
        for w in ahead.windows(2) {
            assert!(w[1].activation <= w[0].activation);
        }
    }

    #[test]
    fn a_reinforce_raises_the_curve_at_its_time() {
        let traces = [
            trace(NOW - 10 * DAY_MS, EventKind::Create),
            trace(NOW - 5 * DAY_MS, EventKind::Reinforce),
        ];
        let c = activation_curve(
            &input(&traces, &ActrParams::default()),
            NOW - 6 * DAY_MS,
            NOW - 4 * DAY_MS,
            NOW,
            3,
        );
        assert!(c[2].activation > c[0].activation, "{c:?}");
    }

    #[test]
    fn point_count_is_bounded() {
        let traces = [trace(NOW, EventKind::Create)];
        let c = activation_curve(
            &input(&traces, &ActrParams::default()),
            NOW - DAY_MS,
            NOW + DAY_MS,
            NOW,
            1_000_000,
        );
        assert!(c.len() <= MAX_POINTS + 1);
    }
}
