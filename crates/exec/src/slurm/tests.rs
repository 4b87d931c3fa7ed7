//! The orchestration against a scripted scheduler, and Slurm's command lines and output.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use mccbuild_plan::manifest::{SlurmConfig, SlurmSteps};

use super::*;

/// A scheduler scripted by the test: each job goes through the states given for its
/// attempt, one per poll, then stays in the last one; a recorded "store" of run ids.
struct Fake {
    /// Per attempt: the states a job goes through; the runs it records when it starts.
    script: Vec<(Vec<JobState>, bool)>,
    jobs: BTreeMap<JobId, (JobRequest, usize)>,
    store: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
    cancelled: Vec<JobId>,
    next: u32,
    fail_submit: bool,
    /// Submissions excluding a node are refused (a cluster with no other node).
    one_node: bool,
}

impl Scheduler for Fake {
    fn submit(&mut self, job: &JobRequest) -> Result<JobId, SchedulerError> {
        if self.fail_submit || (self.one_node && !job.exclude.is_empty()) {
            return Err(SchedulerError::Failed {
                command: "sbatch job.sh".into(),
                status: "exit status: 1".into(),
                stderr: "sbatch: error: invalid partition specified: nope".into(),
            });
        }
        self.next += 1;
        let id = self.next.to_string();
        self.jobs.insert(id.clone(), (job.clone(), 0));
        Ok(id)
    }
    fn states(&mut self, jobs: &[JobId]) -> Result<BTreeMap<JobId, JobState>, SchedulerError> {
        let mut out = BTreeMap::new();
        for id in jobs {
            let (req, step) = self.jobs.get_mut(id).unwrap();
            let (states, records) = &self.script[(req.attempt - 1) as usize];
            let state = states[(*step).min(states.len() - 1)].clone();
            *step += 1;
            if *records && matches!(state, JobState::Running { .. }) {
                self.store
                    .borrow_mut()
                    .extend(req.runs.iter().map(|r| r.id));
            }
            out.insert(id.clone(), state);
        }
        Ok(out)
    }
    fn cancel(&mut self, jobs: &[JobId]) -> Result<(), SchedulerError> {
        self.cancelled.extend(jobs.iter().cloned());
        Ok(())
    }
}

#[derive(Default)]
struct Log {
    store: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
    seen: Vec<usize>,
    /// Runs seen recorded by a job of another command.
    others: Vec<usize>,
    events: Vec<SlurmEvent>,
}

impl Follower for Log {
    fn recorded(&mut self, id: usize, whose: Whose) -> bool {
        let stored = self.store.borrow().contains(&id);
        if stored && !self.seen.contains(&id) {
            self.seen.push(id);
            if whose == Whose::Others {
                self.others.push(id);
            }
        }
        stored
    }
    fn event(&mut self, event: SlurmEvent) {
        self.events.push(event);
    }
}

fn key(n: u8) -> RunKey {
    RunKey::from_hex(&format!("{n:02x}").repeat(32)).unwrap()
}

fn model_job(model: &str, ids: &[usize]) -> ModelJob {
    ModelJob {
        model: model.into(),
        runs: ids
            .iter()
            .map(|&id| JobRun {
                id,
                key: key(id as u8),
                cores: 1,
                replaces: None,
            })
            .collect(),
        cpus: 2,
    }
}

fn settings(attempts: u32) -> FollowSettings {
    FollowSettings {
        attempts,
        poll: Duration::ZERO,
        quiet_poll: Duration::ZERO,
        patience: Duration::from_secs(60),
        submit: true,
    }
}

fn running(node: &str) -> JobState {
    JobState::Running { node: node.into() }
}

fn ended(state: &str) -> JobState {
    JobState::Ended {
        state: state.into(),
        node: "node1".into(),
    }
}

fn fake(script: Vec<(Vec<JobState>, bool)>) -> (Fake, Log) {
    let store = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    (
        Fake {
            script,
            jobs: BTreeMap::new(),
            store: store.clone(),
            cancelled: Vec::new(),
            next: 0,
            fail_submit: false,
            one_node: false,
        },
        Log {
            store,
            ..Log::default()
        },
    )
}

#[test]
fn one_job_per_model_and_all_runs_recorded() {
    let (mut s, mut log) = fake(vec![(
        vec![JobState::Pending, running("n1"), ended("COMPLETED")],
        true,
    )]);
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0, 1, 2]), model_job("B", &[3, 4])],
        &mut log,
        &settings(3),
        &AtomicBool::new(false),
    );
    assert_eq!(out.submitted.len(), 2);
    assert_eq!(out.failed, 0);
    let models: Vec<(String, Vec<usize>)> = s
        .jobs
        .values()
        .map(|(r, _)| (r.model.clone(), r.runs.iter().map(|r| r.id).collect()))
        .collect();
    assert_eq!(
        models,
        vec![("A".into(), vec![0, 1, 2]), ("B".into(), vec![3, 4])]
    );
    log.seen.sort_unstable();
    assert_eq!(log.seen, vec![0, 1, 2, 3, 4]);
}

#[test]
fn a_failed_node_puts_unrecorded_runs_back_and_they_are_resubmitted() {
    // First job: NODE_FAIL with nothing recorded; second: runs and records everything.
    let (mut s, mut log) = fake(vec![
        (vec![running("n2"), ended("NODE_FAIL")], false),
        (vec![running("n1"), ended("COMPLETED")], true),
    ]);
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0, 1])],
        &mut log,
        &settings(3),
        &AtomicBool::new(false),
    );
    assert_eq!(out.submitted, vec!["1".to_string(), "2".to_string()]);
    assert_eq!(out.failed, 0);
    assert!(log.events.iter().any(|e| matches!(e,
        SlurmEvent::Requeued { state, runs, attempt: 2, .. } if state == "NODE_FAIL" && runs == &vec![0, 1])));
    assert!(
        !log.events
            .iter()
            .any(|e| matches!(e, SlurmEvent::Failed { .. }))
    );
    assert_eq!(log.seen, vec![0, 1]);
    // The second job avoids the node the first ended on.
    assert_eq!(s.jobs["1"].0.exclude, Vec::<String>::new());
    assert_eq!(s.jobs["2"].0.exclude, vec!["node1".to_string()]);
}

#[test]
fn each_attempt_avoids_the_nodes_of_the_earlier_ones_unless_none_is_left() {
    let on = |node: &str, state: &str| JobState::Ended {
        state: state.into(),
        node: node.into(),
    };
    let script = vec![
        (vec![running("n1"), on("n1", "COMPLETED")], false),
        (vec![running("n2"), on("", "NODE_FAIL")], false),
        (vec![running("n3"), on("n3", "COMPLETED")], true),
    ];
    let (mut s, mut log) = fake(script.clone());
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0])],
        &mut log,
        &settings(3),
        &AtomicBool::new(false),
    );
    assert_eq!((out.submitted.len(), out.failed), (3, 0));
    assert_eq!(s.jobs["3"].0.exclude, ["n1", "n2"]);
    // A scheduler refusing the exclusion (no node left): submitted again without it.
    let (mut s, mut log) = fake(script);
    s.one_node = true;
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0])],
        &mut log,
        &settings(3),
        &AtomicBool::new(false),
    );
    assert_eq!((out.submitted.len(), out.failed), (3, 0));
    assert!(s.jobs.values().all(|(r, _)| r.exclude.is_empty()));
}

#[test]
fn a_jobs_last_failure_is_read_from_its_log() {
    let log = "recorded on node1: t M-PT-1 StateSpace: answered\n\
               failed on node3: t M-PT-1 OneSafe: infrastructure failure (not recorded): cannot create /x/tmp: No space left on device (os error 28)\n\
               recorded on node3: t M-PT-1 Liveness: answered\n\
               error: 1 run could not be carried out (not recorded)\n";
    assert_eq!(
        last_failure(log).as_deref(),
        Some(
            "failed on node3: t M-PT-1 OneSafe: infrastructure failure (not recorded): cannot create /x/tmp: No space left on device (os error 28)"
        )
    );
    assert_eq!(last_failure("recorded on n: x: answered\n"), None);
    assert_eq!(
        last_failure("error: the store cache is not writable\n").as_deref(),
        Some("error: the store cache is not writable")
    );
}

#[test]
fn only_unrecorded_runs_are_resubmitted() {
    let (mut s, mut log) = fake(vec![
        (vec![running("n2"), ended("CANCELLED")], false),
        (vec![running("n1"), ended("COMPLETED")], true),
    ]);
    log.store.borrow_mut().push(1); // run 1 recorded by the first job
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0, 1, 2])],
        &mut log,
        &settings(3),
        &AtomicBool::new(false),
    );
    assert_eq!(out.failed, 0);
    let second = &s.jobs["2"].0;
    assert_eq!(
        second.runs.iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![0, 2]
    );
    assert_eq!(second.attempt, 2);
}

#[test]
fn attempts_are_bounded_then_an_infrastructure_failure() {
    let (mut s, mut log) = fake(vec![
        (vec![ended("NODE_FAIL")], false),
        (vec![ended("FAILED")], false),
    ]);
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0, 1])],
        &mut log,
        &settings(2),
        &AtomicBool::new(false),
    );
    assert_eq!(out.submitted.len(), 2);
    assert_eq!(out.failed, 2);
    let failed: Vec<&SlurmEvent> = log
        .events
        .iter()
        .filter(|e| matches!(e, SlurmEvent::Failed { .. }))
        .collect();
    assert_eq!(failed.len(), 1);
    let SlurmEvent::Failed { runs, reason } = failed[0] else {
        unreachable!()
    };
    assert_eq!(runs, &vec![0, 1]);
    assert!(
        reason.contains("after 2 jobs") && reason.contains("FAILED"),
        "{reason}"
    );
}

#[test]
fn runs_already_recorded_are_not_submitted() {
    let (mut s, mut log) = fake(vec![(vec![ended("COMPLETED")], false)]);
    log.store.borrow_mut().extend([0, 1]);
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0, 1]), model_job("B", &[2])],
        &mut log,
        &settings(1),
        &AtomicBool::new(false),
    );
    assert_eq!(out.submitted, vec!["1".to_string()]);
    assert_eq!(s.jobs["1"].0.model, "B");
    assert_eq!(out.failed, 1);
}

#[test]
fn cancel_cancels_exactly_the_active_jobs_submitted() {
    let (mut s, mut log) = fake(vec![(vec![running("n1")], false)]);
    let cancel = AtomicBool::new(false);
    // The follower sets cancel when the first job runs (as Ctrl-C would).
    struct CancelOnRun<'a>(&'a mut Log, &'a AtomicBool);
    impl Follower for CancelOnRun<'_> {
        fn recorded(&mut self, id: usize, whose: Whose) -> bool {
            self.0.recorded(id, whose)
        }
        fn event(&mut self, e: SlurmEvent) {
            if matches!(e, SlurmEvent::Running { .. }) {
                self.1.store(true, Ordering::SeqCst);
            }
            self.0.event(e);
        }
    }
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0]), model_job("B", &[1])],
        &mut CancelOnRun(&mut log, &cancel),
        &settings(3),
        &cancel,
    );
    assert_eq!(out.cancelled, vec!["1".to_string(), "2".to_string()]);
    assert_eq!(s.cancelled, out.cancelled);
    assert_eq!(out.failed, 0);
}

#[test]
fn a_submission_error_fails_the_jobs_runs_without_retrying() {
    let (mut s, mut log) = fake(vec![(vec![ended("COMPLETED")], false)]);
    s.fail_submit = true;
    let out = follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0, 1])],
        &mut log,
        &settings(3),
        &AtomicBool::new(false),
    );
    assert_eq!(out.failed, 2);
    assert!(out.submitted.is_empty());
    assert!(log.events.iter().any(|e| matches!(e,
        SlurmEvent::Failed { reason, .. } if reason.contains("invalid partition"))));
}

#[test]
fn squeue_lines_are_read() {
    let states =
        parse_squeue("12|RUNNING|node2\n13|PENDING|\n14|NODE_FAIL|node1\n15|COMPLETING|node3\n");
    assert_eq!(states["12"], running("node2"));
    assert_eq!(states["13"], JobState::Pending);
    assert_eq!(states["14"], ended("NODE_FAIL"));
    assert_eq!(states["15"], running("node3"));
}

#[test]
fn sbatch_gets_one_node_and_the_settings() {
    let cli = SlurmCli {
        config: SlurmConfig {
            partition: Some("mcc".into()),
            account: Some("lip6".into()),
            qos: None,
            sbatch_options: vec!["--time=1:00:00".into()],
            srun_options: vec!["--mem-per-cpu=100".into()],
            ..SlurmConfig::default()
        },
        mccbuild: "/opt/mcc build/mccbuild".into(),
        manifest: "/c/contest.toml".into(),
        chdir: "/c".into(),
        dir: "/c/cache/slurm".into(),
        tag: "abcd1234".into(),
    };
    let job = JobRequest {
        model: "Philosophers".into(),
        attempt: 1,
        runs: vec![JobRun {
            id: 0,
            key: key(7),
            cores: 1,
            replaces: None,
        }],
        cpus: 2,
        exclude: Vec::new(),
    };
    let args = cli.sbatch_args(&job);
    for expected in [
        "--nodes=1",
        "--cpus-per-task=2",
        "--no-requeue",
        "--job-name=mccbuild-abcd1234-Philosophers",
        "--chdir=/c",
        "--output=/c/cache/slurm/Philosophers-%j.out",
        "--partition=mcc",
        "--account=lip6",
        "--time=1:00:00",
    ] {
        assert!(
            args.contains(&expected.to_string()),
            "{expected} in {args:?}"
        );
    }
    assert!(
        !args
            .iter()
            .any(|a| a.starts_with("--qos") || a.starts_with("--exclude"))
    );
    let again = JobRequest {
        exclude: vec!["node3".into(), "node7".into()],
        ..job.clone()
    };
    assert!(
        cli.sbatch_args(&again)
            .contains(&"--exclude=node3,node7".to_string())
    );
    let script = cli.batch_script(&job, Path::new("/c/cache/slurm/x.keys"));
    assert!(
        script.contains("MCCBUILD='/opt/mcc build/mccbuild'"),
        "{script}"
    );
    assert!(script.contains("PARALLEL=2"));
    assert!(script.contains("'--mem-per-cpu=100'"));
    assert!(script.contains("exec-run --manifest \"$MANIFEST\" --key \"$key\" </dev/null &"));

    let cli = SlurmCli {
        config: SlurmConfig {
            steps: SlurmSteps::PerModel,
            ..cli.config
        },
        ..cli
    };
    let script = cli.batch_script(&job, Path::new("/c/cache/slurm/x.keys"));
    assert!(
        script.contains("srun --exact -N1 -n1 -c2 ")
            && script.contains(
                "exec-run --manifest '/c/contest.toml' --keys-file '/c/cache/slurm/x.keys' --jobs 2"
            ),
        "{script}"
    );
}

#[test]
fn a_rerun_names_the_record_it_replaces_in_one_word_of_the_keys_file() {
    let mut run = JobRun {
        id: 0,
        key: key(7),
        cores: 1,
        replaces: None,
    };
    assert_eq!(run.exec_run_key(), key(7).hex());
    run.replaces = Some(key(9).0);
    let word = run.exec_run_key();
    assert_eq!(word, format!("{}:{}", key(7).hex(), key(9).hex()));
    // The batch script reads `cores key` lines with `read -r`: one word, no blank.
    assert!(!word.contains(char::is_whitespace));
}

/// A job an earlier command submitted, adopted: in the fake scheduler as job 100.
fn adopt(s: &mut Fake, model: &str, ids: &[usize]) -> Adopted {
    let job = model_job(model, ids);
    let request = JobRequest {
        model: job.model,
        attempt: 1,
        runs: job.runs,
        cpus: job.cpus,
        exclude: Vec::new(),
    };
    s.jobs.insert("100".into(), (request.clone(), 0));
    Adopted {
        job: "100".into(),
        request,
    }
}

#[test]
fn an_adopted_job_is_followed_not_submitted_and_its_runs_are_not_ours() {
    let (mut s, mut log) = fake(vec![(
        vec![JobState::Pending, running("n1"), ended("COMPLETED")],
        true,
    )]);
    let adopted = adopt(&mut s, "A", &[0, 1]);
    let out = follow_jobs(
        &mut s,
        vec![adopted],
        vec![model_job("B", &[2])],
        &mut log,
        &settings(3),
        &AtomicBool::new(false),
    );
    assert_eq!(out.submitted, vec!["1".to_string()], "only model B's job");
    assert_eq!(s.jobs["1"].0.model, "B");
    assert_eq!(out.failed, 0);
    log.seen.sort();
    assert_eq!(log.seen, vec![0, 1, 2]);
    assert_eq!(log.others, vec![0, 1], "recorded by the adopted job");
}

#[test]
fn following_only_submits_nothing_leaves_what_a_job_did_not_record_and_cancels_nothing() {
    let (mut s, mut log) = fake(vec![(vec![running("n1"), ended("NODE_FAIL")], false)]);
    let adopted = adopt(&mut s, "A", &[0, 1]);
    let follow = FollowSettings {
        submit: false,
        ..settings(3)
    };
    let out = follow_jobs(
        &mut s,
        vec![adopted],
        vec![model_job("B", &[2])],
        &mut log,
        &follow,
        &AtomicBool::new(false),
    );
    assert!(out.submitted.is_empty(), "{out:?}");
    assert_eq!((out.left, out.failed), (2, 0));
    assert!(log.events.iter().any(|e| matches!(e,
        SlurmEvent::Left { job, runs, .. } if job == "100" && runs == &vec![0, 1])));

    // Interrupted: nothing cancelled.
    let (mut s, mut log) = fake(vec![(vec![running("n1")], false)]);
    let adopted = adopt(&mut s, "A", &[0]);
    let cancel = AtomicBool::new(true);
    let out = follow_jobs(
        &mut s,
        vec![adopted],
        Vec::new(),
        &mut log,
        &follow,
        &cancel,
    );
    assert!(
        out.cancelled.is_empty() && s.cancelled.is_empty(),
        "{out:?}"
    );
}

#[test]
fn a_job_on_a_node_runs_its_first_runs_as_many_as_its_slots() {
    // Model A's job: 2 CPUs, runs of 1 core: 2 at a time. Run 0 is recorded once the job runs:
    // then runs 1 and 2 are the ones running.
    let (mut s, mut log) = fake(vec![(
        vec![running("n1"), running("n1"), ended("COMPLETED")],
        false,
    )]);
    struct RecordFirst<'a>(&'a mut Log);
    impl Follower for RecordFirst<'_> {
        fn recorded(&mut self, id: usize, whose: Whose) -> bool {
            self.0.recorded(id, whose)
        }
        fn event(&mut self, e: SlurmEvent) {
            if matches!(e, SlurmEvent::Running { .. }) {
                self.0.store.borrow_mut().push(0);
            }
            self.0.event(e);
        }
    }
    follow_jobs(
        &mut s,
        Vec::new(),
        vec![model_job("A", &[0, 1, 2, 3])],
        &mut RecordFirst(&mut log),
        &settings(1),
        &AtomicBool::new(false),
    );
    let running: Vec<Vec<usize>> = log
        .events
        .iter()
        .filter_map(|e| match e {
            SlurmEvent::Running { runs, .. } => Some(runs.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(running, vec![vec![0, 1], vec![2]], "{:?}", log.events);
}

#[test]
fn live_jobs_are_this_contests_queued_or_running_ones() {
    let text = "\
21|RUNNING|node2|2|mccbuild-abcd1234-Philosophers|/c/store/slurm/Philosophers-a1-77-123.sh
22|PENDING||4|mccbuild-abcd1234-Token-Ring|/c/store/slurm/Token-Ring-a2-77-124.sh
23|RUNNING|node1|2|mccbuild-ffff0000-Philosophers|/d/store/slurm/Philosophers-a1-78-125.sh
24|COMPLETED|node1|2|mccbuild-abcd1234-Deadlock|/c/store/slurm/Deadlock-a1-77-126.sh
25|RUNNING|node3|1|wrap|/home/u/job.sh
";
    let jobs = parse_live_jobs(text, "mccbuild-abcd1234-");
    let got: Vec<(&str, &str, u32, &JobState)> = jobs
        .iter()
        .map(|j| (j.id.as_str(), j.model.as_str(), j.cpus, &j.state))
        .collect();
    assert_eq!(
        got,
        vec![
            ("21", "Philosophers", 2, &running("node2")),
            ("22", "Token-Ring", 4, &JobState::Pending)
        ]
    );
    assert_eq!(
        jobs[1].script,
        Path::new("/c/store/slurm/Token-Ring-a2-77-124.sh")
    );
}

#[test]
fn a_live_jobs_key_list_gives_its_runs_and_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("Token-Ring-a2-77-124.keys");
    let rerun = format!("{}:{}", key(2).hex(), key(9).hex());
    fs_write(&keys, &format!("1 {}\n4 {rerun}\n", key(1).hex()));
    assert_eq!(super::cli::attempt_of(&keys), 2);
    assert_eq!(
        super::cli::read_key_list(&keys).unwrap(),
        vec![(1, key(1), None), (4, key(2), Some(key(9).0))]
    );
    fs_write(&keys, "1 nokey\n");
    assert!(
        super::cli::read_key_list(&keys)
            .unwrap_err()
            .contains("is not `<cores> <key>`")
    );
    assert!(super::cli::read_key_list(&dir.path().join("gone.keys")).is_err());
    assert_eq!(super::cli::attempt_of(Path::new("x.keys")), 1);
}

fn fs_write(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
}
