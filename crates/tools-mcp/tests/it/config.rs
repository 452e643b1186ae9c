//! The gateway configuration: the README's example parses; every error names its key and
//! line; the policy decides as documented.

use std::path::Path;
use std::time::Duration;

use tools_mcp::gateway::{Decision, GatewayConfig, Language, UpstreamConfig};
use tools_mcp::{ErrorKind, ServerSpec};
use tools_runtime::tools::PresentationMode;

fn parse(text: &str) -> Result<GatewayConfig, tools_mcp::Error> {
    GatewayConfig::parse(text, Path::new("/etc/gw/gateway.toml"))
}

fn error(text: &str) -> String {
    let e = parse(text).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Config);
    e.to_string()
}

/// Checks that each config text is refused with a message holding every needle.
fn refused_with(cases: &[(&str, &[&str])]) {
    for (text, needles) in cases {
        let message = error(text);
        for needle in *needles {
            assert!(
                message.contains(needle),
                "{text:?}: {message:?} lacks {needle:?}"
            );
        }
    }
}

/// The ```toml block of the crate README, as written there.
fn readme_example() -> String {
    let readme = include_str!("../../README.md");
    let start = readme.find("```toml\n").unwrap() + "```toml\n".len();
    let end = start + readme[start..].find("```").unwrap();
    readme[start..end].to_owned()
}

#[test]
fn the_readme_example_parses_into_what_it_says() {
    let config = parse(&readme_example()).unwrap();
    assert_eq!(config.mode, PresentationMode::Both);
    assert_eq!(config.language, Language::Typescript);
    assert_eq!(config.concurrency, Some(8));
    assert_eq!(config.output_budget, Some(32768));
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["everything", "remote", "time"]);
    assert!(
        matches!(&config.servers[2].spec, ServerSpec::Command { program, .. } if program == "uvx")
    );
    assert!(
        matches!(&config.servers[1].spec, ServerSpec::Url { url } if url.starts_with("http://"))
    );
    assert_eq!(
        config.budget_of("time__get_current_time"),
        Some(Duration::from_secs(5))
    );
    assert_eq!(
        config.budget_of("everything__echo"),
        Some(Duration::from_secs(30))
    );
    let deferred: Vec<&str> = config
        .servers
        .iter()
        .map(|s| s.deferred)
        .map(|d| if d { "deferred" } else { "direct" })
        .collect();
    assert_eq!(deferred, ["deferred", "direct", "direct"]);
    let globs: Vec<&str> = config.deferred.iter().map(|p| p.as_str()).collect();
    assert_eq!(globs, ["time__convert_*"]);
    assert!(config.deferred[0].is_match("time__convert_time"));
    assert!(config.defers());
    assert_eq!(config.policy.destructive, Some(Decision::Ask));
    assert_eq!(config.policy.root, "/");
    assert_eq!(config.policy.rules.len(), 1);
    // The example spells out the defaults.
    assert_eq!(config.upstream, UpstreamConfig::default());
    assert_eq!(config.upstream.handshake_timeout, Duration::from_secs(30));
    assert_eq!(config.upstream.list_timeout, Duration::from_secs(30));
    assert_eq!(config.upstream.call_timeout, Duration::from_secs(60));
    assert_eq!(config.upstream.max_content_blocks, 10_000);
}

#[test]
fn upstream_deadlines_are_positive_durations() {
    let config = parse(
        "[upstream]\nhandshake_timeout = \"5s\"\nlist_timeout = \"1m\"\ncall_timeout = \"250ms\"\n",
    )
    .unwrap();
    assert_eq!(config.upstream.handshake_timeout, Duration::from_secs(5));
    assert_eq!(config.upstream.list_timeout, Duration::from_secs(60));
    assert_eq!(config.upstream.call_timeout, Duration::from_millis(250));
    assert_eq!(parse("").unwrap().upstream, UpstreamConfig::default());
    refused_with(&[
        (
            "[upstream]\ncall_timeout = \"soon\"\n",
            &["line 2", "upstream.call_timeout", "soon"][..],
        ),
        (
            "\n[upstream]\nlist_timeout = \"0s\"\n",
            &["line 3", "upstream.list_timeout", "positive"][..],
        ),
        (
            "[upstream]\nhandshake_timeout = \"30d\"\n",
            &["line 2", "upstream.handshake_timeout", "24 days"][..],
        ),
        ("[upstream]\nretry = \"1s\"\n", &["line 2", "retry"][..]),
    ]);
}

#[test]
fn the_content_block_bound_is_a_positive_integer() {
    assert_eq!(
        parse("").unwrap().upstream.max_content_blocks,
        tools_mcp::DEFAULT_MAX_CONTENT_BLOCKS
    );
    let config = parse("[upstream]\nmax_content_blocks = 50\n").unwrap();
    assert_eq!(config.upstream.max_content_blocks, 50);
    for text in [
        "[upstream]\nmax_content_blocks = 0\n",
        "[upstream]\nmax_content_blocks = -3\n",
    ] {
        let message = error(text);
        for needle in ["line 2", "upstream.max_content_blocks", "positive"] {
            assert!(
                message.contains(needle),
                "{text:?}: {message:?} lacks {needle:?}"
            );
        }
    }
}

#[test]
fn the_policy_root_is_an_absolute_path() {
    // Default `/`; written paths are normalized lexically.
    assert_eq!(parse("").unwrap().policy.root, "/");
    for (root, normalized) in [
        ("/", "/"),
        ("/srv/data", "/srv/data"),
        ("//srv/./x/../data/", "/srv/data"),
        ("/..", "/"),
    ] {
        let config = parse(&format!("[policy]\nroot = {root:?}\n")).unwrap();
        assert_eq!(config.policy.root, normalized, "{root}");
    }
    // A relative root (or none at all) is refused, naming the key, its line and the rule.
    for root in ["relative", "", "./srv", "~/x"] {
        let message = error(&format!("\n[policy]\nroot = {root:?}\n"));
        for needle in [
            "line 3",
            "`policy.root`",
            &format!("{root:?}"),
            "not an absolute path",
            "must start with `/`",
        ] {
            assert!(
                message.contains(needle),
                "{root:?}: {message:?} lacks {needle:?}"
            );
        }
    }
    assert!(error("[policy]\nroot = 1\n").contains("line 2"));
    // Unknown keys still fail, next to `root` as anywhere else; `root` belongs to
    // `[policy]`, not to a rule, and is a string.
    refused_with(&[
        (
            "[policy]\nroot = \"/\"\nroots = \"/srv\"\n",
            &["line 3", "roots"][..],
        ),
        (
            "[policy]\nroot = \"/\"\n\n[[policy.rules]]\ntool = \"*\"\nargument = \"p\"\n\
             matches = \"/x\"\ndecision = \"deny\"\nroot = \"/\"\n",
            &["line 9", "unknown field `root`"][..],
        ),
        ("[policy.root]\npath = \"/\"\n", &["line 1", "string"][..]),
    ]);
}

#[test]
fn an_empty_file_is_a_native_gateway_with_no_servers() {
    let config = parse("").unwrap();
    assert_eq!(config.mode, PresentationMode::Native);
    assert!(config.servers.is_empty());
}

#[test]
fn errors_name_the_key_and_the_line() {
    let cases: [(&str, &[&str]); 10] = [
        ("mode = \"fast\"\n", &["line 1", "fast", "native"]),
        ("\nlanguage = \"ruby\"\n", &["line 2", "ruby"]),
        (
            "[servers.time]\ncommand = [\"a\"]\nurl = \"http://x\"\n",
            &["line 1", "servers.time", "both"],
        ),
        (
            "\n[servers.time]\nenv = {}\n",
            &["line 2", "servers.time", "command"],
        ),
        (
            "[servers.\"a__b\"]\ncommand = [\"a\"]\n",
            &["line 1", "servers.a__b", "__"],
        ),
        (
            "[servers.x]\ncommand = []\n",
            &["line 2", "servers.x.command", "no program"],
        ),
        (
            "[servers.x]\nurl = \"ftp://x\"\n",
            &["line 2", "servers.x.url", "http"],
        ),
        (
            "[budgets]\n\"time__*\" = \"soon\"\n",
            &["line 2", "budgets.\"time__*\"", "soon"],
        ),
        (
            "[policy]\ndeny = [\"a[\"]\n",
            &["line 2", "policy.deny", "a["],
        ),
        ("concurrency = 0\n", &["line 1", "concurrency", "positive"]),
    ];
    for (text, needles) in cases {
        let message = error(text);
        assert!(message.starts_with("/etc/gw/gateway.toml: "), "{message}");
        for needle in needles {
            assert!(
                message.contains(needle),
                "{text:?}: {message:?} lacks {needle:?}"
            );
        }
    }
    let unknown = error("[servers.x]\ncommand = [\"a\"]\ncomand = 1\n");
    assert!(
        unknown.contains("line 3") && unknown.contains("comand"),
        "{unknown}"
    );
}

#[test]
fn budgets_match_in_file_order() {
    let config = parse("[budgets]\n\"time__slow\" = \"1m\"\n\"time__*\" = \"5s\"\n").unwrap();
    assert_eq!(
        config.budget_of("time__slow"),
        Some(Duration::from_secs(60))
    );
    assert_eq!(config.budget_of("time__fast"), Some(Duration::from_secs(5)));
    assert_eq!(config.budget_of("other"), None);
}

#[test]
fn deferral_is_a_server_flag_or_top_level_globs() {
    let config = parse("").unwrap();
    assert!(config.deferred.is_empty() && !config.defers());
    let config =
        parse("deferred = [\"a__*\", \"b__get_?\"]\n[servers.a]\ncommand = [\"a\"]\n").unwrap();
    assert!(config.defers());
    assert!(!config.servers[0].deferred);
    assert!(config.deferred[1].is_match("b__get_x"));
    assert!(!config.deferred[1].is_match("b__get_xy"));
    let config = parse("[servers.a]\ncommand = [\"a\"]\ndeferred = true\n").unwrap();
    assert!(config.servers[0].deferred && config.deferred.is_empty() && config.defers());
    // A bad glob is refused naming the key and its line; a value of the wrong type
    // naming its line and what was expected.
    refused_with(&[
        (
            "mode = \"native\"\ndeferred = [\"a__*\", \"a[b\"]\n",
            &["line 2", "`deferred`", "\"a[b\"", "not a valid pattern"][..],
        ),
        (
            "deferred = \"a__*\"\n",
            &["line 1", "expected a sequence"][..],
        ),
        ("deferred = [3]\n", &["line 1", "expected a string"][..]),
        (
            "[servers.a]\ncommand = [\"a\"]\ndeferred = \"yes\"\n",
            &["line 3", "expected a boolean"][..],
        ),
    ]);
}

#[test]
fn the_readme_tool_search_example_parses() {
    let readme = include_str!("../../README.md");
    let section = &readme[readme.find("### Tool search").unwrap()..];
    let start = section.find("```toml\n").unwrap() + "```toml\n".len();
    let end = start + section[start..].find("```").unwrap();
    let config = parse(&section[start..end]).unwrap();
    let globs: Vec<&str> = config.deferred.iter().map(|p| p.as_str()).collect();
    assert_eq!(globs, ["github__*", "jira__get_?*"]);
    let deferred: Vec<(&str, bool)> = config
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.deferred))
        .collect();
    assert_eq!(deferred, [("github", false), ("slack", true)]);
}
