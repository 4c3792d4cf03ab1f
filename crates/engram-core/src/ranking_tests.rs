//! Table tests of recall's ranking.

use super::*;
use crate::scoring::Fusion;

const CAL: Calibration = Calibration {
    unrelated: 0.1,
    paraphrase: 0.6,
    duplicate: 0.9,
    multilingual: false,
};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn standing(activation: f64, importance: f64, session: Option<&str>) -> Standing<'_> {
    Standing {
        activation,
        importance,
        session,
        speaker: None,
    }
}

#[test]
fn candidates_are_lexical_first_then_vector_only() {
    let ids = candidate_ids(&[(3, 0.9), (1, 0.2)], &[(1, 0.8), (7, 0.5), (3, 0.4)]);
    assert_eq!(ids, vec![3, 1, 7]);
    assert!(candidate_ids(&[], &[]).is_empty());
}

#[test]
fn fusion_table() {
    let lexical = [(1, 0.8), (2, 0.4)];
    let vector = [(3, 0.7), (2, 0.5)];
    let coverage: HashMap<MemoryId, f64> = [(1, 1.0), (2, 0.5)].into();
    let cosines: HashMap<MemoryId, f64> = [(1, 0.2), (2, 0.5), (3, 0.7)].into();
    let none = HashMap::new();
    let cfg = |fusion| Config {
        fusion,
        ..Config::default()
    };
    let cw = Config::default().coverage_weight;
    let wl = Config::default().w_lexical;
    // Lexical of each id without a vector: (1 − cw)·bm25/best + cw·coverage.
    let lex = [
        (1.0 - cw) * 1.0 + cw * 1.0,
        (1.0 - cw) * 0.5 + cw * 0.5,
        0.0,
    ];
    let lexical_only = fuse(
        &cfg(Fusion::Weighted),
        &Sources {
            lexical: &lexical,
            vector: &[],
            coverage: &coverage,
            cosines: &none,
            query_vector: false,
            calibration: None,
        },
    );
    assert_eq!(lexical_only.len(), 2);
    assert!(close(lexical_only[0].relevance, lex[0]));
    assert!(close(lexical_only[1].relevance, lex[1]));
    assert!(close(lexical_only[1].absolute, 0.5), "absolute is coverage");
    assert_eq!(lexical_only[0].cosine, None);

    let with = |fusion| {
        fuse(
            &cfg(fusion),
            &Sources {
                lexical: &lexical,
                vector: &vector,
                coverage: &coverage,
                cosines: &cosines,
                query_vector: true,
                calibration: Some(CAL),
            },
        )
    };
    // Weighted: cosines min-max over 0.2..0.7 (span 0.5).
    let weighted = with(Fusion::Weighted);
    assert_eq!(weighted.iter().map(|s| s.id).collect::<Vec<_>>(), [1, 2, 3]);
    let expect = [
        wl * lex[0] + (1.0 - wl) * 0.0,
        wl * lex[1] + (1.0 - wl) * 0.6,
        wl * lex[2] + (1.0 - wl) * 1.0,
    ];
    for (s, e) in weighted.iter().zip(expect) {
        assert!(close(s.relevance, e), "{s:?} vs {e}");
    }
    // Absolute: the larger of coverage and the calibrated cosine.
    assert!(close(weighted[2].absolute, CAL.scale(0.7)));
    assert!(close(weighted[0].absolute, 1.0));
    // Max: the larger of lexical and calibrated cosine.
    let max = with(Fusion::Max);
    assert!(close(max[2].relevance, CAL.scale(0.7)));
    assert!(close(max[0].relevance, lex[0]));
    // RRF: both lists' ranks, rescaled so first in both is 1.
    let rrf = with(Fusion::Rrf);
    let k = Config::default().rrf_k;
    let r = |p: f64| 1.0 / (k + p + 1.0);
    assert!(close(rrf[1].relevance, (r(1.0) + r(1.0)) * (k + 1.0) / 2.0));
    assert!(close(rrf[2].relevance, r(0.0) * (k + 1.0) / 2.0));
}

#[test]
fn a_session_lifts_its_own_candidates() {
    let mut scored: Vec<Scored> = [(1, 1.0), (2, 0.2), (3, 0.2)]
        .iter()
        .map(|&(id, relevance)| Scored {
            id,
            relevance,
            absolute: relevance,
            coverage: 0.0,
            cosine: None,
        })
        .collect();
    let standings: HashMap<MemoryId, Standing<'_>> = [
        (1, standing(0.0, 0.5, Some("s"))),
        (2, standing(0.0, 0.5, Some("s"))),
        (3, standing(0.0, 0.5, None)),
    ]
    .into();
    session_prior(&mut scored, &standings, 0.0);
    assert!(close(scored[1].relevance, 0.2), "0 turns it off");
    session_prior(&mut scored, &standings, 0.5);
    let mean = (1.0 + 0.2) / 2.0;
    assert!(close(scored[1].relevance, (0.2 + 0.5 * mean) / 1.5));
    assert!(close(scored[0].relevance, (1.0 + 0.5 * mean) / 1.5));
    assert!(close(scored[2].relevance, 0.2), "no session, no lift");
}

#[test]
fn direct_ranking_orders_by_score_then_id_and_skips_gone_memories() {
    let cfg = Config {
        w_session: 0.0,
        ..Config::default()
    };
    let scored: Vec<Scored> = [(5, 0.5, 0.9), (2, 0.5, 0.1), (9, 1.0, 1.0), (4, 0.9, 0.3)]
        .iter()
        .map(|&(id, relevance, absolute)| Scored {
            id,
            relevance,
            absolute,
            coverage: absolute,
            cosine: None,
        })
        .collect();
    let standings: HashMap<MemoryId, Standing<'_>> = [
        (5, standing(0.2, 0.5, None)),
        (2, standing(0.2, 0.5, None)),
        (4, standing(0.2, 0.5, None)),
    ]
    .into();
    let ranked = rank_direct(&cfg, scored, &standings, &Default::default());
    assert_eq!(
        ranked.hits.iter().map(|h| h.id).collect::<Vec<_>>(),
        [4, 2, 5]
    );
    assert_eq!(ranked.candidates, 3);
    let w = cfg.weights();
    assert!(close(
        ranked.best_raw,
        scoring::final_score(&w, 0.9, 0.2, 0.5)
    ));
    assert!(
        close(ranked.best_relevance, 0.9),
        "the gone memory does not count"
    );
    assert!(ranked.hits.iter().all(|h| h.via == Via::Direct));
}

#[test]
fn associations_join_below_their_seeds() {
    let cfg = Config::default();
    let mut ranked = Ranked {
        hits: vec![RankedHit {
            id: 1,
            score: 0.8,
            relevance: 1.0,
            absolute: 1.0,
            activation: 0.5,
            coverage: 1.0,
            cosine: None,
            via: Via::Direct,
            path: None,
        }],
        best_raw: 0.8,
        best_relevance: 1.0,
        candidates: 1,
    };
    assert_eq!(seeds(&ranked, 3), vec![(1, 1.0)]);
    let edges = [scoring::Edge {
        a: 1,
        b: 2,
        weight: 1.0,
    }];
    let reached = scoring::spread(&seeds(&ranked, 3), &edges, 2, 0.7);
    assert_eq!(newly_reached(&ranked, &reached), vec![2]);
    let standings: HashMap<MemoryId, Standing<'_>> = [(2, standing(0.1, 0.5, None))].into();
    let cosines: HashMap<MemoryId, f64> = [(2, 0.3)].into();
    add_associative(&cfg, &mut ranked, &reached, &standings, &cosines, None);
    assert_eq!(ranked.hits.len(), 2);
    let a = &ranked.hits[1];
    assert_eq!(
        (a.id, a.via, a.path.clone()),
        (2, Via::Associative, Some(vec![1, 2]))
    );
    assert!(close(a.relevance, 0.7));
    assert_eq!((a.coverage, a.cosine), (0.0, Some(0.3)));
    assert_eq!(ranked.candidates, 1, "associations are not candidates");
}

#[test]
fn exhaustive_table() {
    let cosines: HashMap<MemoryId, f64> = [(1, 0.1), (2, 0.6), (3, 0.1)].into();
    let lexical = [(1, 0.5), (3, 0.5), (4, 0.01)];
    let vector = [(2, 0.6)];
    let lexical_only = exhaustive_relevances(&lexical, &vector, None, 0.05);
    assert_eq!(
        lexical_only,
        vec![(1, 0.5), (3, 0.5)],
        "vector ids need a model; the floor drops 4"
    );
    let mut with_model = exhaustive_relevances(&lexical, &vector, Some((&cosines, CAL)), 0.05);
    with_model.sort_by_key(|c| c.0);
    assert_eq!(with_model, vec![(1, 0.5), (2, 1.0), (3, 0.5)]);
    let standings: HashMap<MemoryId, Standing<'_>> = [
        (1, standing(0.1, 0.5, None)),
        (2, standing(0.1, 0.5, None)),
        (3, standing(0.9, 0.5, None)),
    ]
    .into();
    let coverage: HashMap<MemoryId, f64> = [(1, 0.5)].into();
    let ranked = rank_exhaustive(&with_model, &standings, &coverage, &cosines, Some(CAL));
    // Relevance first, then activation breaks the 0.5 tie.
    assert_eq!(
        ranked.hits.iter().map(|h| h.id).collect::<Vec<_>>(),
        [2, 3, 1]
    );
    assert!(close(ranked.best_relevance, 1.0));
    assert!(ranked.hits.iter().all(|h| h.score == h.relevance));
    let lexical_ranked =
        rank_exhaustive(&lexical_only, &standings, &coverage, &HashMap::new(), None);
    assert!(
        close(lexical_ranked.best_raw, 0.5),
        "coverage without a model"
    );
}

#[test]
fn successors_rank_above_what_they_replaced() {
    // (hits in ranked order, expected ids in shown order)
    /// Hits in ranked order as `(id, successor)`, and the ids in the order shown.
    type Case<'a> = (&'a [(i64, Option<i64>)], &'a [i64]);
    let cases: &[Case] = &[
        // Nothing superseded: unchanged.
        (&[(1, None), (2, None)], &[1, 2]),
        // The superseded #1 scored higher than its successor #2.
        (&[(1, Some(2)), (3, None), (2, None)], &[2, 1, 3]),
        // Already in order.
        (&[(2, None), (1, Some(2))], &[2, 1]),
        // A successor that is not a hit moves nothing.
        (&[(1, Some(9)), (2, None)], &[1, 2]),
        // A chain: a -> b -> c.
        (&[(1, Some(2)), (2, Some(3)), (3, None)], &[3, 2, 1]),
    ];
    for (hits, want) in cases {
        let got: Vec<i64> = successors_first(hits)
            .into_iter()
            .map(|i| hits[i].0)
            .collect();
        assert_eq!(&got, want, "{hits:?}");
    }
    // A cycle (a data error) ends, with every hit shown once.
    let mut got = successors_first(&[(1, Some(2)), (2, Some(1))]);
    got.sort();
    assert_eq!(got, [0, 1]);
}

#[test]
fn the_speaker_asked_about_gains_relevance() {
    let cfg = Config {
        w_session: 0.0,
        ..Config::default()
    };
    let scored = |id, relevance| Scored {
        id,
        relevance,
        absolute: relevance,
        coverage: relevance,
        cosine: None,
    };
    let said = |speaker| Standing {
        activation: 0.2,
        importance: 0.5,
        session: None,
        speaker: Some(speaker),
    };
    let standings: HashMap<MemoryId, Standing<'_>> =
        [(1, said("Melanie")), (2, said("Caroline"))].into();
    let order = |q: &str| {
        let asked = crate::speaker::asked(q);
        let s = vec![scored(1, 0.8), scored(2, 0.75)];
        rank_direct(&cfg, s, &standings, &asked)
            .hits
            .iter()
            .map(|h| h.id)
            .collect::<Vec<_>>()
    };
    assert_eq!(order("What did Caroline paint?"), [2, 1]);
    // Nobody named, or both: the relevance order stands.
    assert_eq!(order("what was painted?"), [1, 2]);
    assert_eq!(order("Did Caroline and Melanie paint?"), [1, 2]);
}
