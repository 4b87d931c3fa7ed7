//! Rule E-5: the conditions runs are executed in.

/// Rule E-5.1: "For a given model, all examinations on all instances are processed for all
/// tools on the same physical machine so that results can be compared fairly in terms of
/// performances (CPU, memory)." The runs of each model, together (one machine each), models in
/// the order their first run comes, runs in their order.
pub fn machine_groups<R>(runs: impl IntoIterator<Item = (usize, R)>) -> Vec<(usize, Vec<R>)> {
    let mut groups: Vec<(usize, Vec<R>)> = Vec::new();
    let mut index_of: std::collections::HashMap<usize, usize> = std::collections::HashMap::new();
    for (model, run) in runs {
        let g = *index_of.entry(model).or_insert_with(|| {
            groups.push((model, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(run);
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_a_model_go_together_in_order() {
        // Runs 0..5 of models 7, 3, 7, 9, 3: model 7 first (runs 0, 2), then 3 (1, 4), then 9.
        let runs = [(7, 0), (3, 1), (7, 2), (9, 3), (3, 4)];
        assert_eq!(
            machine_groups(runs),
            vec![(7, vec![0, 2]), (3, vec![1, 4]), (9, vec![3])]
        );
        assert!(machine_groups(Vec::<(usize, u8)>::new()).is_empty());
    }
}
