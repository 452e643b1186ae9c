//! Scenario f4 (cold start of one run, `return 100`) for every code runtime and isolation:
//! TypeScript in process (the default) against TypeScript in the confined QuickJS worker,
//! sandboxed and unconfined, and Python sandboxed and unconfined, each through
//! `CodeRuntime::run` with no bindings. Baseline: starting and reaping `/bin/true`, the
//! floor of any process-isolated run on this machine.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use tools_codemode::{BindingFuture, BindingHost, CodeRunRequest, CodeRuntime, RuntimeLimits};
use tools_quickjs::QuickJsRuntime;
use tools_sandbox::{
    Isolation, PythonOptions, PythonRuntime, QuickJsProcessOptions, QuickJsProcessRuntime,
};

const WORKER: &str = env!("CARGO_BIN_EXE_tools-codemode-worker");

struct NoHost;

impl BindingHost for NoHost {
    fn call(&self, _global: &str, name: &str, _args: tools_json::JsonValue) -> BindingFuture {
        BindingFuture::ready(Err(format!("no binding {name}").into()))
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let limits = RuntimeLimits::default;
    let runtimes: Vec<(&str, Arc<dyn CodeRuntime>, &str)> = vec![
        (
            "f4_ts_in_process",
            Arc::new(QuickJsRuntime::new(limits()).unwrap()),
            "return 100",
        ),
        (
            "f4_ts_sandboxed_process",
            Arc::new(
                QuickJsProcessRuntime::new(limits(), QuickJsProcessOptions::new(WORKER)).unwrap(),
            ),
            "return 100",
        ),
        (
            "f4_ts_unconfined_process",
            Arc::new(
                QuickJsProcessRuntime::new(
                    limits(),
                    QuickJsProcessOptions::new(WORKER).isolation(Isolation::UnconfinedProcess),
                )
                .unwrap(),
            ),
            "return 100",
        ),
        (
            "f4_python_sandboxed",
            Arc::new(PythonRuntime::new(limits()).unwrap()),
            "return 100",
        ),
        (
            "f4_python_unconfined",
            Arc::new(
                PythonRuntime::with_options(
                    limits(),
                    PythonOptions::default().isolation(Isolation::UnconfinedProcess),
                )
                .unwrap(),
            ),
            "return 100",
        ),
    ];
    for (name, runtime, program) in &runtimes {
        let result =
            rt.block_on(runtime.run(CodeRunRequest::new(*program, Vec::new(), Arc::new(NoHost))));
        let value = result.unwrap().value.map(|v| v.to_string());
        assert_eq!(value.as_deref(), Some("100"), "{name}");
    }

    let mut group = c.benchmark_group("cold_start");
    group.sample_size(20);
    group.bench_function("baseline_spawn_true", |b| {
        b.iter(|| {
            let status = std::process::Command::new("/bin/true").status().unwrap();
            black_box(status)
        })
    });
    for (name, runtime, program) in &runtimes {
        group.bench_function(*name, |b| {
            b.iter(|| {
                let request = CodeRunRequest::new(*program, Vec::new(), Arc::new(NoHost));
                black_box(rt.block_on(runtime.run(request)).unwrap())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
