//! The visibility resolver against a reference model: random sequences of register,
//! dispose, restrict and lift across a three-level chain (global ← P ← C, and a sibling S);
//! after every step each scope's view equals the model's, and `has_timeouts` tells whether
//! any registered tool declares a timeout (every third id does).

use proptest::prelude::*;
use serde_json::json;
use tools_registry::{AgentScope, OutputDecl, Registration, Registry, ToolDefinition, ToolFilter};

const NAMES: [&str; 4] = ["a", "b", "c", "d"];

/// Layer indices: 0 global, 1 P, 2 C (child of P), 3 S.
const PARENT: [Option<usize>; 4] = [None, None, Some(1), None];

#[derive(Clone, Debug)]
enum Op {
    Register {
        layer: usize,
        name: usize,
    },
    Dispose {
        handle: usize,
    },
    Restrict {
        scope: usize,
        allow: Option<Vec<usize>>,
        deny: Option<Vec<usize>>,
    },
    Lift {
        handle: usize,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let names = prop::collection::vec(0..NAMES.len(), 0..3);
    prop_oneof![
        4 => (0..4usize, 0..NAMES.len()).prop_map(|(layer, name)| Op::Register { layer, name }),
        2 => (0..16usize).prop_map(|handle| Op::Dispose { handle }),
        2 => (1..4usize, prop::option::of(names.clone()), prop::option::of(names))
            .prop_map(|(scope, allow, deny)| Op::Restrict { scope, allow, deny }),
        1 => (0..16usize).prop_map(|handle| Op::Lift { handle }),
    ]
}

/// A mask of the model: (id, allow, deny).
type Mask = (u64, Option<Vec<String>>, Option<Vec<String>>);

#[derive(Default, Clone)]
struct ModelLayer {
    /// (name, id) in insertion order.
    tools: Vec<(String, u64)>,
    masks: Vec<Mask>,
}

#[derive(Default)]
struct Model {
    layers: [ModelLayer; 4],
}

impl Model {
    /// The chain of a scope index, nearest first (global excluded).
    fn chain(scope: usize) -> Vec<usize> {
        let mut chain = Vec::new();
        let mut next = Some(scope);
        while let Some(s) = next {
            chain.push(s);
            next = PARENT[s];
        }
        chain
    }

    fn inherited(&self, scope: usize) -> Vec<(String, u64)> {
        let mut out: Vec<(String, u64)> = self.layers[0].tools.clone();
        let mut ancestors = Model::chain(scope);
        ancestors.remove(0);
        for layer in ancestors.into_iter().rev() {
            for (name, id) in &self.layers[layer].tools {
                match out.iter_mut().find(|(n, _)| n == name) {
                    Some(slot) => slot.1 = *id,
                    None => out.push((name.clone(), *id)),
                }
            }
        }
        out
    }

    fn admits(&self, layer: usize, name: &str) -> bool {
        self.layers[layer].masks.iter().all(|(_, allow, deny)| {
            allow.as_ref().is_none_or(|a| a.iter().any(|n| n == name))
                && deny.as_ref().is_none_or(|d| !d.iter().any(|n| n == name))
        })
    }

    fn view(&self, scope: Option<usize>) -> Vec<(String, u64)> {
        let Some(scope) = scope else {
            return self.layers[0].tools.clone();
        };
        let chain = Model::chain(scope);
        let mut visible: Vec<(String, u64)> = self
            .inherited(scope)
            .into_iter()
            .filter(|(name, _)| chain.iter().all(|layer| self.admits(*layer, name)))
            .collect();
        for (name, id) in &self.layers[scope].tools {
            match visible.iter_mut().find(|(n, _)| n == name) {
                Some(slot) => slot.1 = *id,
                None => visible.push((name.clone(), *id)),
            }
        }
        visible
    }
}

fn tool(name: &str, id: u64) -> ToolDefinition {
    let builder = ToolDefinition::builder(name, id.to_string())
        .output(OutputDecl::text(json!({"type": "string"})))
        .body(|_a, _c| async { Ok(json!("x")) });
    let builder = if has_budget(id) {
        builder.timeout(std::time::Duration::from_millis(id))
    } else {
        builder
    };
    builder.build().expect("valid definition")
}

/// Whether the model's tool `id` declares a timeout.
fn has_budget(id: u64) -> bool {
    id.is_multiple_of(3)
}

fn list(names: &Option<Vec<usize>>) -> Option<Vec<String>> {
    names
        .as_ref()
        .map(|n| n.iter().map(|i| NAMES[*i].to_owned()).collect())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn views_equal_the_reference_model(ops in prop::collection::vec(op(), 1..40)) {
        let registry = Registry::new();
        let p = registry.scope();
        let c = registry.child_scope(&p);
        let s = registry.scope();
        let scopes: [Option<&AgentScope>; 4] = [None, Some(&p), Some(&c), Some(&s)];
        let mut model = Model::default();
        // Handles: (registration, layer, id, is_tool).
        let mut handles: Vec<(Registration, usize, u64, bool)> = Vec::new();
        let mut next_id = 0u64;

        for op in ops {
            match op {
                Op::Register { layer, name } => {
                    next_id += 1;
                    let name = NAMES[name];
                    let result = match scopes[layer] {
                        None => registry.register(tool(name, next_id)),
                        Some(scope) => scope.register(tool(name, next_id)),
                    };
                    let duplicate = model.layers[layer].tools.iter().any(|(n, _)| n == name);
                    prop_assert_eq!(result.is_err(), duplicate);
                    if let Ok(handle) = result {
                        model.layers[layer].tools.push((name.to_owned(), next_id));
                        handles.push((handle, layer, next_id, true));
                    }
                }
                Op::Dispose { handle } | Op::Lift { handle } => {
                    if handle < handles.len() {
                        let (registration, layer, id, is_tool) = handles.remove(handle);
                        registration.dispose();
                        if is_tool {
                            model.layers[layer].tools.retain(|(_, other)| *other != id);
                        } else {
                            model.layers[layer].masks.retain(|(other, _, _)| *other != id);
                        }
                    }
                }
                Op::Restrict { scope, allow, deny } => {
                    let (allow, deny) = (list(&allow), list(&deny));
                    let mut filter = ToolFilter::default();
                    if let Some(a) = &allow { filter = filter.and_allow(a.clone()); }
                    if let Some(d) = &deny { filter = filter.and_deny(d.clone()); }
                    let result = scopes[scope].expect("scoped").restrict(filter);
                    let inherited: Vec<String> = model.inherited(scope).into_iter().map(|(n, _)| n).collect();
                    let named: Vec<&String> = allow.iter().chain(deny.iter()).flatten().collect();
                    let expected_ok = (allow.is_some() || deny.is_some())
                        && named.iter().all(|n| inherited.contains(n));
                    prop_assert_eq!(result.is_ok(), expected_ok, "restrict {:?} {:?} on {}", allow, deny, scope);
                    if let Ok(handle) = result {
                        next_id += 1;
                        model.layers[scope].masks.push((next_id, allow, deny));
                        handles.push((handle, scope, next_id, false));
                    }
                }
            }
            for (index, scope) in scopes.iter().enumerate() {
                let view: Vec<(String, u64)> = registry
                    .view(*scope)
                    .tools()
                    .map(|d| (d.name().to_string(), d.description().parse().expect("id")))
                    .collect();
                let expected = model.view((index > 0).then_some(index));
                prop_assert_eq!(view, expected, "scope {}", index);
            }
            let budgets = model
                .layers
                .iter()
                .flat_map(|layer| &layer.tools)
                .any(|(_, id)| has_budget(*id));
            prop_assert_eq!(registry.has_timeouts(), budgets);
        }
    }
}
