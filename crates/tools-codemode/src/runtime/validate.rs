//! Binding validation shared by every runtime: which globals and error classes a caller
//! may inject, so that one set of bindings works in TypeScript and in Python alike.

use std::collections::HashSet;

use super::{BindingNamespace, ContractError};

/// Words no injected global may be: ECMAScript reserved words, strict-mode reserved words,
/// `arguments` and `eval`, and Python's keywords and soft keywords.
pub const RESERVED_WORDS: &[&str] = &[
    // ECMAScript reserved words.
    "await",
    "break",
    "case",
    "catch",
    "class",
    "const",
    "continue",
    "debugger",
    "default",
    "delete",
    "do",
    "else",
    "enum",
    "export",
    "extends",
    "false",
    "finally",
    "for",
    "function",
    "if",
    "import",
    "in",
    "instanceof",
    "new",
    "null",
    "return",
    "super",
    "switch",
    "this",
    "throw",
    "true",
    "try",
    "typeof",
    "var",
    "void",
    "while",
    "with",
    "yield",
    // Strict-mode reserved words, and the two restricted bindings.
    "let",
    "static",
    "implements",
    "interface",
    "package",
    "private",
    "protected",
    "public",
    "arguments",
    "eval",
    // Python keywords.
    "False",
    "None",
    "True",
    "and",
    "as",
    "assert",
    "async",
    "def",
    "del",
    "elif",
    "except",
    "from",
    "global",
    "is",
    "lambda",
    "nonlocal",
    "not",
    "or",
    "pass",
    "raise",
    // Python soft keywords.
    "match",
    "type",
    "_",
];

/// Globals the runtimes keep for themselves.
pub const RESERVED_GLOBALS: &[&str] = &[
    "console",
    "__dsh_main__",
    "__builtins__",
    "__name__",
    "__debug__",
];

/// Built-in members of errors (JavaScript and Python) that cannot carry the binding name.
pub const RESERVED_ERROR_MEMBERS: &[&str] = &[
    "name",
    "message",
    "stack",
    "args",
    "with_traceback",
    "add_note",
];

/// Whether `name` is an identifier in both languages: `[A-Za-z_][A-Za-z0-9_]*` and no
/// reserved word.
pub fn is_portable_identifier(name: &str) -> bool {
    let mut bytes = name.bytes();
    let Some(first) = bytes.next() else {
        return false;
    };
    (first.is_ascii_alphabetic() || first == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && !RESERVED_WORDS.contains(&name)
}

/// Whether `name` is shaped like a Python dunder (`__x__`).
fn is_dunder(name: &str) -> bool {
    name.len() >= 4 && name.starts_with("__") && name.ends_with("__")
}

/// Checks a set of namespaces against the rules every runtime shares.
///
/// - a namespace global is a portable identifier ([`is_portable_identifier`]), not one of
///   [`RESERVED_GLOBALS`], and unique;
/// - an error class name follows the same rules and collides with no namespace global and
///   no other error class;
/// - an error class's member-name property is non-empty, not dunder-shaped and none of
///   [`RESERVED_ERROR_MEMBERS`];
/// - function names are arbitrary strings;
/// - a signature ([`BindingSignature`](super::BindingSignature)) names a function of its
///   namespace, at most one signature per function, and its parameters are distinct
///   portable identifiers.
///
/// # Errors
///
/// The first violation as a [`ContractError`].
///
/// # Examples
///
/// ```
/// use tools_codemode::{BindingNamespace, ContractError, ErrorClass, validate_bindings};
///
/// let tools = BindingNamespace::new("tools", ["echo", "__proto__"], Some(ErrorClass::tool_call_error()));
/// assert_eq!(validate_bindings(&[tools]), Ok(()));
///
/// let bad = BindingNamespace::new("lambda", ["x"], None);
/// assert!(matches!(validate_bindings(&[bad]), Err(ContractError::UnusableGlobal { .. })));
/// ```
pub fn validate_bindings(namespaces: &[BindingNamespace]) -> Result<(), ContractError> {
    let mut globals: HashSet<&str> = HashSet::new();
    for namespace in namespaces {
        let global = namespace.global.as_str();
        if RESERVED_GLOBALS.contains(&global) {
            return Err(ContractError::ReservedGlobal {
                global: global.to_owned(),
            });
        }
        if !is_portable_identifier(global) {
            return Err(ContractError::UnusableGlobal {
                global: global.to_owned(),
            });
        }
        if !globals.insert(global) {
            return Err(ContractError::DuplicateGlobal {
                global: global.to_owned(),
            });
        }
    }
    let mut injected = globals;
    for namespace in namespaces {
        let Some(class) = &namespace.error_class else {
            continue;
        };
        let name = class.name.as_str();
        if RESERVED_GLOBALS.contains(&name) {
            return Err(ContractError::ReservedErrorClass {
                name: name.to_owned(),
            });
        }
        if !is_portable_identifier(name) {
            return Err(ContractError::UnusableErrorClass {
                name: name.to_owned(),
            });
        }
        if !injected.insert(name) {
            return Err(ContractError::DuplicateInjectedGlobal {
                name: name.to_owned(),
            });
        }
        let property = class.member_name_property.as_str();
        if property.is_empty() || is_dunder(property) || RESERVED_ERROR_MEMBERS.contains(&property)
        {
            return Err(ContractError::UnusableMemberProperty {
                class: name.to_owned(),
                property: property.to_owned(),
            });
        }
    }
    for namespace in namespaces {
        check_signatures(namespace)?;
    }
    Ok(())
}

/// The signature rules of one namespace.
fn check_signatures(namespace: &BindingNamespace) -> Result<(), ContractError> {
    let mut seen: HashSet<&str> = HashSet::new();
    for signature in &namespace.signatures {
        let name = signature.name.as_str();
        let unusable = |reason: String| ContractError::UnusableSignature {
            name: name.to_owned(),
            reason,
        };
        if !namespace.names.iter().any(|n| n == name) {
            return Err(unusable(format!(
                "namespace {:?} has no function of that name",
                namespace.global
            )));
        }
        if !seen.insert(name) {
            return Err(unusable("the function has two signatures".to_owned()));
        }
        let mut parameters: HashSet<&str> = HashSet::new();
        for parameter in &signature.parameters {
            if !is_portable_identifier(parameter) {
                return Err(unusable(format!(
                    "parameter {parameter:?} is not a usable identifier"
                )));
            }
            if !parameters.insert(parameter) {
                return Err(unusable(format!("parameter {parameter:?} appears twice")));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::ErrorClass;
    use super::*;

    fn namespace(global: &str, class: Option<(&str, &str)>) -> BindingNamespace {
        BindingNamespace::new(
            global,
            ["a"],
            class.map(|(name, member)| ErrorClass::new(name, member)),
        )
    }

    #[test]
    fn portable_identifiers() {
        for good in ["tools", "_x", "T9", "__proto__", "helpers_2"] {
            assert!(is_portable_identifier(good), "{good}");
        }
        for bad in [
            "",
            "9a",
            "not valid!",
            "$tools",
            "a$b",
            "await",
            "lambda",
            "type",
            "_",
            "é",
        ] {
            assert!(!is_portable_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn unusable_reserved_and_duplicate_globals() {
        for global in [
            "not valid!",
            "await",
            "$tools",
            "a$b",
            "lambda",
            "match",
            "None",
        ] {
            let err = validate_bindings(&[namespace(global, None)]);
            assert!(
                matches!(err, Err(ContractError::UnusableGlobal { .. })),
                "{global}"
            );
        }
        for global in RESERVED_GLOBALS {
            let err = validate_bindings(&[namespace(global, None)]);
            assert!(
                matches!(err, Err(ContractError::ReservedGlobal { .. })),
                "{global}"
            );
        }
        let err = validate_bindings(&[namespace("tools", None), namespace("tools", None)]);
        assert_eq!(
            err,
            Err(ContractError::DuplicateGlobal {
                global: "tools".into()
            })
        );
    }

    #[test]
    fn error_class_rules() {
        type Check = fn(&ContractError) -> bool;
        let cases: [(&str, &str, Check); 9] = [
            ("bad name", "toolName", |e| {
                matches!(e, ContractError::UnusableErrorClass { .. })
            }),
            ("class", "toolName", |e| {
                matches!(e, ContractError::UnusableErrorClass { .. })
            }),
            ("console", "toolName", |e| {
                matches!(e, ContractError::ReservedErrorClass { .. })
            }),
            ("tools", "toolName", |e| {
                matches!(e, ContractError::DuplicateInjectedGlobal { .. })
            }),
            ("E", "", |e| {
                matches!(e, ContractError::UnusableMemberProperty { .. })
            }),
            ("E", "message", |e| {
                matches!(e, ContractError::UnusableMemberProperty { .. })
            }),
            ("E", "args", |e| {
                matches!(e, ContractError::UnusableMemberProperty { .. })
            }),
            ("E", "__dict__", |e| {
                matches!(e, ContractError::UnusableMemberProperty { .. })
            }),
            ("E", "add_note", |e| {
                matches!(e, ContractError::UnusableMemberProperty { .. })
            }),
        ];
        for (name, member, check) in cases {
            let err = validate_bindings(&[namespace("tools", Some((name, member)))]);
            assert!(err.as_ref().is_err_and(check), "{name} / {member}: {err:?}");
        }
        let two = [
            namespace("tools", Some(("E", "toolName"))),
            namespace("helpers", Some(("E", "helperName"))),
        ];
        assert!(matches!(
            validate_bindings(&two),
            Err(ContractError::DuplicateInjectedGlobal { .. })
        ));
        let fine = [
            namespace("tools", Some(("ToolCallError", "toolName"))),
            namespace("helpers", Some(("HelperCallError", "helperName"))),
            namespace("plain", None),
        ];
        assert_eq!(validate_bindings(&fine), Ok(()));
        assert_eq!(
            validate_bindings(&[namespace("tools", Some(("E", "_x_")))]),
            Ok(())
        );
    }

    #[test]
    fn signature_rules() {
        let base = || BindingNamespace::new("tools", ["a", "$search"], None);
        assert_eq!(
            validate_bindings(&[base().with_signature("$search", ["query", "options"])]),
            Ok(())
        );
        assert_eq!(
            validate_bindings(&[base().with_signature("a", Vec::<String>::new())]),
            Ok(())
        );
        for (bad, fragment) in [
            (base().with_signature("missing", ["q"]), "has no function"),
            (
                base().with_signature("a", ["q"]).with_signature("a", ["r"]),
                "two signatures",
            ),
            (base().with_signature("a", ["not valid"]), "\"not valid\""),
            (base().with_signature("a", ["lambda"]), "\"lambda\""),
            (base().with_signature("a", ["q", "q"]), "appears twice"),
        ] {
            let err = validate_bindings(&[bad]).unwrap_err();
            assert!(
                matches!(err, ContractError::UnusableSignature { .. }),
                "{err:?}"
            );
            assert!(err.to_string().contains(fragment), "{err}");
        }
    }

    #[test]
    fn messages_carry_the_facts() {
        let err = validate_bindings(&[namespace("not valid!", None)]).unwrap_err();
        assert!(
            err.to_string()
                .contains("\"not valid!\" is not a usable identifier")
        );
        let err = validate_bindings(&[namespace("console", None)]).unwrap_err();
        assert!(err.to_string().contains("reserved"));
        let err = validate_bindings(&[namespace("tools", Some(("E", "stack")))]).unwrap_err();
        assert!(err.to_string().contains("member property \"stack\""));
    }
}
