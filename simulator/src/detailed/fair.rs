//! Max-min fair rates by progressive filling: raise every unfrozen flow's rate together until
//! some resource is full, freeze the flows on it, repeat. Flows use resources with weights
//! (bytes on the resource per byte of the flow), so one flow may cross many links.

use elk_model::chip::network::Usage;

/// Rates (bytes per cycle) for `flows` on resources of `capacity`; `demand` caps a flow's
/// rate on its own (None: no cap).
pub fn max_min_rates(capacity: &[f64], flows: &[(&Usage, Option<f64>)]) -> Vec<f64> {
    let mut rate = vec![0.0; flows.len()];
    let mut frozen = vec![false; flows.len()];
    let mut left = capacity.to_vec();
    // Resources touched by any flow (the rest never bind).
    let mut touched: Vec<usize> = flows
        .iter()
        .flat_map(|(u, _)| u.iter().map(|e| e.0))
        .collect();
    touched.sort_unstable();
    touched.dedup();
    let mut weight = vec![0.0; capacity.len()];
    for _round in 0..=flows.len() {
        if frozen.iter().all(|&f| f) {
            break;
        }
        for &r in &touched {
            weight[r] = 0.0;
        }
        for (f, (usage, _)) in flows.iter().enumerate() {
            if !frozen[f] {
                for &(r, w) in usage.iter() {
                    weight[r] += w;
                }
            }
        }
        // The largest common increment every resource and every flow cap allows.
        let mut step = f64::INFINITY;
        for &r in &touched {
            if weight[r] > 0.0 {
                step = step.min(left[r].max(0.0) / weight[r]);
            }
        }
        for (f, (_, cap)) in flows.iter().enumerate() {
            if let (false, Some(c)) = (frozen[f], cap) {
                step = step.min((c - rate[f]).max(0.0));
            }
        }
        if !step.is_finite() {
            // Unconstrained flows (no resources, no cap): nothing limits them.
            for (f, r) in rate.iter_mut().enumerate() {
                if !frozen[f] {
                    *r = f64::INFINITY;
                }
            }
            break;
        }
        for (f, (usage, _)) in flows.iter().enumerate() {
            if !frozen[f] {
                rate[f] += step;
                for &(r, w) in usage.iter() {
                    left[r] -= step * w;
                }
            }
        }
        // Freeze flows on a full resource or at their cap.
        let tight = |r: usize| left[r] <= 1e-12 * capacity[r].max(1.0);
        for (f, (usage, cap)) in flows.iter().enumerate() {
            if frozen[f] {
                continue;
            }
            let at_cap = cap.is_some_and(|c| rate[f] >= c * (1.0 - 1e-12));
            if at_cap || usage.iter().any(|&(r, w)| w > 0.0 && tight(r)) {
                frozen[f] = true;
            }
        }
    }
    rate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_flows_on_one_link_get_half_each() {
        let a: Usage = vec![(0, 1.0)];
        let b: Usage = vec![(0, 1.0), (1, 1.0)];
        let r = max_min_rates(&[10.0, 100.0], &[(&a, None), (&b, None)]);
        assert_eq!(r, vec![5.0, 5.0]);
    }

    #[test]
    fn a_capped_flow_leaves_the_rest_to_the_other() {
        let a: Usage = vec![(0, 1.0)];
        let r = max_min_rates(&[10.0], &[(&a, Some(2.0)), (&a, None)]);
        assert_eq!(r, vec![2.0, 8.0]);
    }
}
