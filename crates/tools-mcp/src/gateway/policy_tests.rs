//! The policy's decisions: name lists, argument rules (every spelling of a path), identity
//! rules, and the bounds of a walk.

use std::path::Path;

use serde_json::json;
use tools_registry::ToolHints;
use tools_runtime::{ToolDefinition, tools::OutputDecl};

use super::*;
use crate::gateway::GatewayConfig;

fn policy(text: &str) -> PolicyConfig {
    match GatewayConfig::parse(text, Path::new("t.toml")) {
        Ok(config) => config.policy,
        Err(e) => panic!("{e}"),
    }
}

fn verdict(policy: &PolicyConfig, registry: &Registry, tool: &str, args: Value) -> String {
    match decide(policy, registry, tool, &args, None) {
        None => "none".to_owned(),
        Some(PreDecision::Allow) => "allow".to_owned(),
        Some(PreDecision::Deny(reason)) => format!("deny: {reason}"),
        Some(PreDecision::Ask(reason)) => format!("ask: {}", reason.unwrap_or_default()),
    }
}

const TEXT: &str = r#"
[policy]
deny = ["fs__rm*"]
ask = ["fs__*"]
destructive = "ask"

[[policy.rules]]
tool = "fs__*"
argument = "target.path"
matches = "/etc/*"
decision = "deny"
reason = "not /etc"

[[policy.rules]]
tool = "*"
argument = "items.1"
matches = "secret"
decision = "ask"
"#;

fn verdict_of(policy: &PolicyConfig, tool: &str, principal: Option<Principal>) -> String {
    let registry = Registry::new();
    match decide(
        policy,
        &registry,
        tool,
        &json!({"path": "/srv/x"}),
        principal.as_ref(),
    ) {
        None => "none".to_owned(),
        Some(PreDecision::Allow) => "allow".to_owned(),
        Some(PreDecision::Deny(reason)) => format!("deny: {reason}"),
        Some(PreDecision::Ask(reason)) => format!("ask: {}", reason.unwrap_or_default()),
    }
}

#[test]
fn identity_rules_decide_by_principal_and_scopes() {
    let p = policy(
        r#"
[[policy.rules]]
tool = "db__*"
principal = "alice"
decision = "allow"

[[policy.rules]]
tool = "db__*"
scopes = ["dba"]
decision = "allow"

[[policy.rules]]
tool = "fs__*"
principal = "bob"
decision = "deny"
reason = "bob has no files here"

[[policy.rules]]
tool = "fs__write"
scopes = ["intern"]
decision = "ask"

[[policy.rules]]
tool = "fs__*"
principal = "carol"
argument = "path"
matches = "/srv/**"
decision = "deny"
"#,
    );
    let alice = || Some(Principal::new("alice"));
    let bob = || Some(Principal::new("bob"));
    assert_eq!(verdict_of(&p, "db__query", alice()), "none");
    assert_eq!(
        verdict_of(
            &p,
            "db__query",
            Some(Principal::new("dave").with_scopes(["dba"]))
        ),
        "none"
    );
    let refused = verdict_of(&p, "db__query", bob());
    assert!(refused.starts_with("deny: tool \"db__query\" is allowed only to principal \"alice\" or principals with scopes [\"dba\"]"), "{refused}");
    assert!(verdict_of(&p, "db__query", None).contains("a caller without a principal"));
    assert_eq!(
        verdict_of(&p, "fs__read", bob()),
        "deny: bob has no files here"
    );
    assert_eq!(verdict_of(&p, "fs__read", alice()), "none");
    assert_eq!(verdict_of(&p, "fs__read", None), "none");
    assert!(
        verdict_of(
            &p,
            "fs__write",
            Some(Principal::new("erin").with_scopes(["intern"]))
        )
        .starts_with("ask: the gateway policy's rule for principals with scopes")
    );
    assert!(
        verdict_of(&p, "fs__read", Some(Principal::new("carol")))
            .starts_with("deny: the gateway policy matches argument `path`")
    );
    assert_eq!(verdict_of(&p, "other", bob()), "none");
}

#[test]
fn a_rule_needs_both_argument_and_matches_or_neither() {
    let bad = GatewayConfig::parse(
        "[[policy.rules]]\ntool = \"x\"\nargument = \"path\"\ndecision = \"deny\"\n",
        Path::new("t.toml"),
    );
    assert!(bad.unwrap_err().to_string().contains("go together"));
}

#[test]
fn deny_beats_ask_and_rules_come_first() {
    let p = policy(TEXT);
    let registry = Registry::new();
    assert!(verdict(&p, &registry, "fs__rm", json!({})).starts_with("deny: tool \"fs__rm\""));
    assert!(verdict(&p, &registry, "fs__read", json!({})).starts_with("ask: tool \"fs__read\""));
    assert_eq!(
        verdict(
            &p,
            &registry,
            "fs__read",
            json!({"target": {"path": "/etc/passwd"}})
        ),
        "deny: not /etc"
    );
    assert!(
        verdict(
            &p,
            &registry,
            "fs__read",
            json!({"target": {"path": "/home/x"}})
        )
        .starts_with("ask: tool")
    );
    // Array items by index; the rule's own reason names the argument.
    let secret = verdict(&p, &registry, "web__get", json!({"items": ["a", "secret"]}));
    assert!(
        secret.starts_with("ask: ") && secret.contains("items.1"),
        "{secret}"
    );
    assert_eq!(
        verdict(&p, &registry, "web__get", json!({"items": ["secret"]})),
        "none"
    );
    // Numbers and booleans match as their JSON text; an object matches when a value
    // inside it does (its keys are not values).
    assert_eq!(
        verdict(&p, &registry, "x", json!({"items": [0, {"secret": 1}]})),
        "none"
    );
    let inside = verdict(&p, &registry, "x", json!({"items": [0, {"k": "secret"}]}));
    assert!(
        inside.starts_with("ask: ") && inside.contains("`items.1` holds \"secret\""),
        "{inside}"
    );
    let flag = policy(
        "[[policy.rules]]\ntool = \"*\"\nargument = \"a\"\nmatches = \"tru?\"\ndecision = \"deny\"\n",
    );
    assert!(verdict(&flag, &registry, "x", json!({"a": true})).starts_with("deny: "));
    assert!(verdict(&flag, &registry, "x", json!({"a": [false, [true]]})).starts_with("deny: "));
    assert_eq!(verdict(&flag, &registry, "x", json!({"a": null})), "none");
}

/// One rule over `path`: `matches` decides `decision`, under `root` when given.
fn path_rule(matches: &str, decision: &str, root: Option<&str>) -> PolicyConfig {
    let root = root.map_or(String::new(), |r| format!("[policy]\nroot = {r:?}\n"));
    policy(&format!(
        "{root}[[policy.rules]]\ntool = \"fs__*\"\nargument = \"path\"\n\
         matches = {matches:?}\ndecision = {decision:?}\n"
    ))
}

#[test]
fn every_spelling_of_a_denied_path_is_denied() {
    let p = path_rule("/etc/**", "deny", None);
    let registry = Registry::new();
    for path in [
        json!("/etc/shadow"),
        json!("/tmp/../etc/shadow"),
        json!("//etc/shadow"),
        json!("/./etc/shadow"),
        json!("/etc"),
        json!("etc/shadow"),
        json!(["/etc/shadow"]),
        json!({"p": "/etc/shadow"}),
        // and their combinations, and what stays at the root above it
        json!("/etc/"),
        json!("/etc/."),
        json!("///etc//./shadow/"),
        json!("./etc/../etc/shadow"),
        json!("/../../../etc/shadow"),
        json!("../../etc"),
        json!(["ok", {"deep": [[{"p": "/var/../etc/x"}]]}]),
    ] {
        let v = verdict(&p, &registry, "fs__read", json!({ "path": path }));
        assert!(v.starts_with("deny: "), "{path} got {v}");
    }
}

#[test]
fn neighbours_of_a_denied_path_are_not_denied() {
    let p = path_rule("/etc/**", "deny", None);
    let registry = Registry::new();
    for path in [
        json!("/etcetera/x"),
        json!("/etc.d"),
        json!("/tmp/etc/shadow"),
        json!("/home/x/../y"),
        json!("tmp/etc"),
        json!("/"),
        json!(""),
        json!(".."),
        json!(null),
        json!([]),
        json!({}),
        json!({"/etc/shadow": "keys are not values"}),
        json!(["/home", {"p": "/var/etc"}]),
    ] {
        let v = verdict(&p, &registry, "fs__read", json!({ "path": path }));
        assert_eq!(v, "none", "{path}");
    }
    // Another tool, or the argument missing: the rule does not apply.
    assert_eq!(
        verdict(&p, &registry, "web__get", json!({"path": "/etc"})),
        "none"
    );
    assert_eq!(
        verdict(&p, &registry, "fs__read", json!({"other": "/etc"})),
        "none"
    );
}

#[test]
fn reasons_name_the_argument_the_value_and_its_path() {
    let p = path_rule("/etc/**", "deny", None);
    let registry = Registry::new();
    let r = |path: Value| verdict(&p, &registry, "fs__read", json!({ "path": path }));
    assert_eq!(
        r(json!("/etc/shadow")),
        "deny: the gateway policy matches argument `path` = \"/etc/shadow\" against \"/etc/**\""
    );
    assert_eq!(
        r(json!("/tmp/../etc/shadow")),
        "deny: the gateway policy matches argument `path` = \"/tmp/../etc/shadow\" \
         (the path \"/etc/shadow\") against \"/etc/**\""
    );
    assert_eq!(
        r(json!(["x", "etc"])),
        "deny: the gateway policy matches argument `path` holds \"etc\" \
         (the path \"/etc\") against \"/etc/**\""
    );
    assert_eq!(
        r(json!({"a": 1, "b": "/etc/passwd"})),
        "deny: the gateway policy matches argument `path` holds \"/etc/passwd\" against \"/etc/**\""
    );
}

#[test]
fn a_pattern_ending_in_a_slash_star_also_names_its_directory() {
    let registry = Registry::new();
    for pattern in ["/etc/*", "/etc/**", "/etc/**/*", "etc/**"] {
        let p = path_rule(pattern, "ask", None);
        for path in ["/etc", "/tmp/../etc", "/etc/x", "/etc/x/y", "etc/x"] {
            let v = verdict(&p, &registry, "fs__read", json!({ "path": path }));
            assert!(v.starts_with("ask: "), "{pattern} {path} got {v}");
        }
        for path in ["/etcx", "/", "/x/etc/y", "/e"] {
            let v = verdict(&p, &registry, "fs__read", json!({ "path": path }));
            assert_eq!(v, "none", "{pattern} {path}");
        }
    }
    // A trailing `/` names the directory alone.
    let dir = path_rule("/etc/", "ask", None);
    for (path, asked) in [
        ("/etc", true),
        ("/etc/.", true),
        ("/tmp/../etc/", true),
        ("etc", true),
        ("/etc/x", false),
    ] {
        let v = verdict(&dir, &registry, "fs__read", json!({ "path": path }));
        assert_eq!(v.starts_with("ask: "), asked, "{path} got {v}");
    }
    // `/**` is everything, the root included; a pattern without `/` compares the text
    // as given only.
    let all = path_rule("/**", "deny", None);
    for path in ["/", "", "x", "/a/b", "..", "7"] {
        let v = verdict(&all, &registry, "fs__read", json!({ "path": path }));
        assert!(v.starts_with("deny: "), "{path} got {v}");
    }
    let plain = path_rule("shadow", "deny", None);
    for (path, denied) in [("shadow", true), ("./shadow", false), ("/shadow", false)] {
        let v = verdict(&plain, &registry, "fs__read", json!({ "path": path }));
        assert_eq!(v.starts_with("deny: "), denied, "{path} got {v}");
    }
}

#[test]
fn relative_values_and_patterns_resolve_against_the_root() {
    let registry = Registry::new();
    let p = path_rule("/srv/data/secret/**", "deny", Some("/srv/./data/"));
    assert_eq!(p.root, "/srv/data");
    for (path, denied) in [
        ("secret/a", true),
        ("./secret", true),
        ("x/../secret/a", true),
        ("/srv/data/secret", true),
        ("../data/secret/a", true),
        ("secrets", false),
        ("/secret/a", false),
        ("../secret/a", false),
    ] {
        let v = verdict(&p, &registry, "fs__read", json!({ "path": path }));
        assert_eq!(v.starts_with("deny: "), denied, "{path} got {v}");
    }
    // `..` goes above the configured root, as the upstream server would.
    let etc = path_rule("/etc/**", "deny", Some("/srv/data"));
    for (path, denied) in [
        ("../../etc/shadow", true),
        ("../../../../etc", true),
        ("etc/shadow", false),
    ] {
        let v = verdict(&etc, &registry, "fs__read", json!({ "path": path }));
        assert_eq!(v.starts_with("deny: "), denied, "{path} got {v}");
    }
    // A relative pattern is also read against the root; glob characters in the root
    // are literal.
    let rel = path_rule("secret/**", "deny", Some("/srv/[x]"));
    for (path, denied) in [
        ("secret/a", true),
        ("./secret", true),
        ("/srv/[x]/secret/a", true),
        ("/srv/x/secret/a", false),
        ("/other/secret", false),
    ] {
        let v = verdict(&rel, &registry, "fs__read", json!({ "path": path }));
        assert_eq!(v.starts_with("deny: "), denied, "{path} got {v}");
    }
}

#[test]
fn allow_rules_match_under_the_same_normalization() {
    let registry = Registry::new();
    let p = path_rule("/home/**", "allow", None);
    for path in [
        json!("/home/x"),
        json!("/tmp/../home"),
        json!(["/home/a"]),
        json!("/home/x/../../etc"),
    ] {
        assert!(
            matches!(find(&p.rules[0], &path), Found::Match(_)),
            "{path}"
        );
    }
    let outside = json!("/etc/passwd");
    assert!(matches!(find(&p.rules[0], &outside), Found::Nothing));
    // An allow rule has nothing to say on its own, and decides nothing about what it
    // could not look at.
    let big = json!({"path": vec!["/home/x"; MAX_VALUES + 1]});
    assert!(matches!(find(&p.rules[0], &big["path"]), Found::Match(_)));
    let big = json!({"path": vec!["/etc"; MAX_VALUES + 1]});
    assert!(matches!(find(&p.rules[0], &big["path"]), Found::TooLarge));
    assert_eq!(verdict(&p, &registry, "fs__read", big), "none");
}

/// `value` nested `levels` arrays deep.
fn nested(value: Value, levels: usize) -> Value {
    (0..levels).fold(value, |inner, _| Value::Array(vec![inner]))
}

#[test]
fn a_walk_past_its_bounds_is_refused() {
    let registry = Registry::new();
    let deny = path_rule("/etc/**", "deny", None);
    let ask = path_rule("/etc/**", "ask", Some("/srv"));
    let both = |v: Value| {
        let args = json!({ "path": v });
        (
            verdict(&deny, &registry, "fs__read", args.clone()),
            verdict(&ask, &registry, "fs__read", args),
        )
    };
    // At the bounds: looked at in full.
    let none = ("none".to_owned(), "none".to_owned());
    assert_eq!(both(json!(vec!["/home"; MAX_VALUES - 1])), none);
    assert_eq!(both(nested(json!("/home"), MAX_DEPTH)), none);
    assert_eq!(both(nested(json!([]), MAX_DEPTH)), none);
    assert!(
        both(nested(json!("/etc"), MAX_DEPTH))
            .0
            .starts_with("deny: the gateway policy matches")
    );
    // One past: refused by a deny rule, asked about by an ask rule.
    for v in [
        json!(vec!["/home"; MAX_VALUES]),
        json!({"a": vec![1; MAX_VALUES / 2], "b": vec![[true]; MAX_VALUES / 4]}),
        nested(json!("/home"), MAX_DEPTH + 1),
        nested(json!({"p": "/home"}), MAX_DEPTH),
    ] {
        let (d, a) = both(v);
        let why = "cannot check argument `path` against \"/etc/**\", so it applies the \
                   rule: argument `path` holds more than 10000 values or nests deeper \
                   than 64 levels";
        assert_eq!(d, format!("deny: the gateway policy {why}"));
        assert_eq!(a, format!("ask: the gateway policy {why}"));
    }
    // A match found before the bound is a match; a rule's own reason is kept.
    let mut items = vec![json!("/etc/x")];
    items.extend(std::iter::repeat_n(json!("/home"), MAX_VALUES));
    let (d, _) = both(Value::Array(items));
    assert!(d.starts_with("deny: the gateway policy matches"), "{d}");
    let own = policy(
        "[[policy.rules]]\ntool = \"*\"\nargument = \"p\"\nmatches = \"/etc/**\"\n\
         decision = \"deny\"\nreason = \"not /etc\"\n",
    );
    let v = verdict(&own, &registry, "x", json!({"p": nested(json!(1), 100)}));
    assert_eq!(
        v,
        "deny: not /etc (argument `p` holds more than 10000 values or nests deeper than \
         64 levels: too large to check)"
    );
}

#[test]
fn destructive_hints_are_asked_about_when_configured() {
    let p = policy(TEXT);
    let registry = Registry::new();
    let tool = |name: &str, hints: ToolHints| {
        ToolDefinition::builder(name, "")
            .hints(hints)
            .output(OutputDecl::text(json!({})))
            .body(|_a, _c| async { Ok(json!("")) })
            .build()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    for def in [
        tool("db__drop", ToolHints::new().with_destructive(true)),
        tool("db__read", ToolHints::new().with_destructive(false)),
        tool("db__other", ToolHints::new()),
    ] {
        registry
            .register(def)
            .unwrap_or_else(|e| panic!("{e}"))
            .keep();
    }
    assert!(verdict(&p, &registry, "db__drop", json!({})).contains("marked destructive"));
    assert_eq!(verdict(&p, &registry, "db__read", json!({})), "none");
    assert_eq!(verdict(&p, &registry, "db__other", json!({})), "none");
    let allow = policy("[policy]\ndestructive = \"allow\"\n");
    assert_eq!(verdict(&allow, &registry, "db__drop", json!({})), "none");
    let deny = policy("[policy]\ndestructive = \"deny\"\n");
    assert!(verdict(&deny, &registry, "db__drop", json!({})).starts_with("deny: "));
}
