//! The direct (recursive) validator: the same verdicts and the same violations, in the same
//! order, as the iterative walk of `validate.rs`, for schemas shallow enough that recursing
//! cannot exhaust a thread's stack.
//!
//! Why two: the iterative walk pushes a task per value and keeps a path arena, which costs a
//! task write, a task read and a dispatch per value; recursing costs a call. On the e1
//! fixture (`NESTED_ARGS`, about 100 values) the direct walk runs in well under half the
//! instructions. The iterative walk stays for deep schemas (a foreign schema may nest
//! hundreds of levels), and serves as the oracle of this one's property tests.
//!
//! Recursion follows the schema, not the value: a value only descends where its schema
//! does (an `Any` node's content is checked by the iterative [`is_lossless`]), so the depth
//! is at most the schema's nesting, which [`MAX_DEPTH`] bounds.
//!
//! A path is never built unless a violation is reported: each level keeps its step in a
//! [`Frame`] on the Rust stack, linked to its parent's.

use serde_json::Value;

use super::bounds::Bounds;
use super::compile::PropertyMap;
use super::walk::{
    Members, match_members, scalar_miss, scalar_passes, scalar_verdict, undeclared_keys,
};
use super::{Node, NodeId};
use crate::lossless::Step;
use crate::path::Segments;
use crate::{
    JsonType, LosslessScope, Path, Segment, Violation, ViolationKind, Violations, is_lossless,
};

/// The deepest schema (in nested nodes) the direct walk takes. A level costs well under a
/// kilobyte of stack, so the walk stays within a few dozen kilobytes.
pub(crate) const MAX_DEPTH: usize = 64;

/// The nesting depth of a compiled schema: node 0 is the root and every child has a larger
/// id than its parent (the compiler allocates a node's children when it builds the node).
pub(crate) fn nesting(nodes: &[Node]) -> usize {
    let mut depth = vec![0usize; nodes.len()];
    let mut deepest = 0;
    for (id, node) in nodes.iter().enumerate() {
        let below = depth.get(id).copied().unwrap_or(0) + 1;
        let mut set = |child: NodeId| {
            if let Some(slot) = depth.get_mut(child as usize) {
                *slot = (*slot).max(below);
                deepest = deepest.max(below);
            }
        };
        match node {
            Node::Any { .. } | Node::Scalar { .. } => {}
            Node::OneOf(branches) => branches.iter().copied().for_each(&mut set),
            Node::Array { items, .. } => items.iter().copied().for_each(&mut set),
            Node::Object { properties, .. } => properties.values().copied().for_each(&mut set),
        }
    }
    deepest
}

/// One level of the path being validated, on the Rust stack.
struct Frame<'a, 'p> {
    parent: Option<&'p Frame<'a, 'p>>,
    step: Step<'a>,
}

impl Frame<'_, '_> {
    fn path(&self, root: &str) -> Path {
        let mut depth = 0;
        let mut at = Some(self);
        while let Some(frame) = at {
            depth += 1;
            at = frame.parent;
        }
        let mut segments = Segments::with_capacity(depth);
        let mut at = Some(self);
        while let Some(frame) = at {
            match frame.step {
                Step::Root => {}
                Step::Key(key) => segments.push(Segment::key(key)),
                Step::Declared(name) => segments.push(Segment::key(name)),
                Step::Index(index) => segments.push(Segment::Index(index)),
            }
            at = frame.parent;
        }
        segments.reverse();
        Path::from_segments(root, segments)
    }
}

struct Direct<'a> {
    nodes: &'a [Node],
    root: &'a str,
    out: Vec<Violation>,
    /// Nesting of `oneOf` branches being probed; failures inside are counted, not reported.
    probing: usize,
    /// Whether failures outside any `oneOf` only end the walk (for [`is_valid`]).
    quiet: bool,
    /// Set when a failure outside any `oneOf` happened in quiet mode.
    invalid: bool,
}

/// Validates and returns every violation (as `validate::validate`).
pub(crate) fn validate(nodes: &[Node], value: &Value, root: &str) -> Violations {
    let mut walk = Direct::new(nodes, root, false);
    let top = Frame {
        parent: None,
        step: Step::Root,
    };
    walk.visit(0, value, &top);
    walk.out.into()
}

/// Whether `value` is valid, stopping at the first failure (as `validate::is_valid`).
pub(crate) fn is_valid(nodes: &[Node], value: &Value) -> bool {
    let mut walk = Direct::new(nodes, "", true);
    let top = Frame {
        parent: None,
        step: Step::Root,
    };
    walk.visit(0, value, &top);
    !walk.invalid
}

impl<'a> Direct<'a> {
    fn new(nodes: &'a [Node], root: &'a str, quiet: bool) -> Direct<'a> {
        Direct {
            nodes,
            root,
            out: Vec::new(),
            probing: 0,
            quiet,
            invalid: false,
        }
    }

    fn reporting(&self) -> bool {
        self.probing == 0 && !self.quiet
    }

    /// Reports `kind` at `at`, or (probing, quiet) records the failure: `false` means the
    /// walk is cut back to the enclosing `oneOf` branch (or ended, in quiet mode).
    fn fail(&mut self, at: &Frame<'a, '_>, kind: ViolationKind) -> bool {
        if self.reporting() {
            self.out.push(Violation::new(at.path(self.root), kind));
            true
        } else {
            self.cut()
        }
    }

    /// As [`Direct::fail`], for a kind only built when reported.
    fn fail_with(&mut self, at: &Frame<'a, '_>, kind: impl FnOnce() -> ViolationKind) -> bool {
        if self.reporting() {
            self.fail(at, kind())
        } else {
            self.cut()
        }
    }

    fn cut(&mut self) -> bool {
        if self.probing == 0 {
            self.invalid = true;
        }
        false
    }

    /// Validates `value` (at `at`) against node `node`; `false` when cut.
    fn visit(&mut self, node: NodeId, value: &'a Value, at: &Frame<'a, '_>) -> bool {
        let nodes = self.nodes;
        let Some(schema) = nodes.get(node as usize) else {
            return true;
        };
        match schema {
            Node::Any { bounds } => {
                if !is_lossless(value) {
                    let scope = LosslessScope::Value;
                    self.fail(at, ViolationKind::NotLossless { scope })
                } else {
                    self.bounds(bounds.as_deref(), value, at)
                }
            }
            Node::OneOf(branches) => self.one_of(branches, value, at),
            Node::Scalar {
                ty,
                allowed,
                constant,
                bounds,
                ..
            } => {
                let (allowed, constant) = (allowed.as_ref(), constant.as_ref());
                match scalar_miss(*ty, allowed, constant, value) {
                    Some(miss) => self.fail_with(at, || miss.kind()),
                    None => self.bounds(bounds.as_deref(), value, at),
                }
            }
            Node::Array { items, bounds } => {
                let Value::Array(elements) = value else {
                    let expected = JsonType::Array;
                    return self.fail(at, ViolationKind::ExpectedType { expected });
                };
                if !self.bounds(bounds.as_deref(), value, at) {
                    return false;
                }
                match items {
                    Some(items) => {
                        for (index, element) in elements.iter().enumerate() {
                            if scalar_passes(nodes, *items, element) {
                                continue;
                            }
                            let frame = Frame {
                                parent: Some(at),
                                step: Step::Index(index),
                            };
                            if !self.visit(*items, element, &frame) {
                                return false;
                            }
                        }
                        true
                    }
                    None if elements.iter().all(is_lossless) => true,
                    None => {
                        let scope = LosslessScope::Array;
                        self.fail(at, ViolationKind::NotLossless { scope })
                    }
                }
            }
            Node::Object {
                properties,
                required,
                closed,
                bounds,
            } => {
                let Value::Object(members) = value else {
                    let expected = JsonType::Object;
                    return self.fail(at, ViolationKind::ExpectedType { expected });
                };
                if !self.bounds(bounds.as_deref(), value, at) {
                    return false;
                }
                self.object(properties, required, *closed, members, at)
            }
        }
    }

    #[inline(never)]
    fn one_of(&mut self, branches: &'a [NodeId], value: &'a Value, at: &Frame<'a, '_>) -> bool {
        self.probing += 1;
        let mut matched = 0usize;
        for &branch in branches {
            let passed = match scalar_verdict(self.nodes, branch, value) {
                Some(passes) => passes,
                None => self.visit(branch, value, at),
            };
            if passed {
                matched += 1;
            }
        }
        self.probing -= 1;
        if matched == 1 {
            true
        } else {
            self.fail(at, ViolationKind::OneOfMismatch { matched })
        }
    }

    /// Every bound `value` breaks (the first only, when probing or quiet); `true` without
    /// bounds.
    fn bounds(&mut self, bounds: Option<&'a Bounds>, value: &'a Value, at: &Frame<'a, '_>) -> bool {
        let Some(bounds) = bounds else {
            return true;
        };
        let mut go_on = true;
        bounds.check(value, |kind| {
            go_on = self.fail(at, kind);
            go_on
        });
        go_on
    }

    /// An object in one pass over its members, in the iterative walk's order: missing
    /// required properties, the declared properties in declaration order (each subtree
    /// whole), undeclared keys of a closed object in value order, then the lossless check
    /// of the undeclared members when nothing below was reported.
    // Kept out of `visit`: inlined, its slots and saved registers would make every scalar's
    // call pay an object's frame.
    #[inline(never)]
    fn object(
        &mut self,
        properties: &'a PropertyMap,
        required: &'a [u32],
        closed: bool,
        members: &'a serde_json::Map<String, Value>,
        at: &Frame<'a, '_>,
    ) -> bool {
        // The member matching each declared property (on the stack for up to 24).
        let mut inline: [Option<&'a Value>; 24] = [None; 24];
        let mut spilled: Vec<Option<&'a Value>>;
        let present: &mut [Option<&'a Value>] = match inline.get_mut(..properties.len()) {
            Some(slots) => slots,
            None => {
                spilled = vec![None; properties.len()];
                &mut spilled
            }
        };
        let Members {
            undeclared,
            undeclared_lossy,
        } = match_members(properties, closed, members, present);
        for &index in required {
            if present.get(index as usize).is_some_and(Option::is_none) {
                let Some((name, _)) = properties.get_index(index as usize) else {
                    continue;
                };
                let frame = Frame {
                    parent: Some(at),
                    step: Step::Declared(name),
                };
                if !self.fail(&frame, ViolationKind::MissingRequired) {
                    return false;
                }
            }
        }
        if undeclared && !self.reporting() {
            return self.cut();
        }
        let mark = self.out.len();
        for (index, member) in present.iter().enumerate() {
            let (Some(member), Some((name, &child))) = (member, properties.get_index(index)) else {
                continue;
            };
            if scalar_passes(self.nodes, child, member) {
                continue;
            }
            let frame = Frame {
                parent: Some(at),
                step: Step::Declared(name),
            };
            if !self.visit(child, member, &frame) {
                return false;
            }
        }
        if undeclared {
            for key in undeclared_keys(properties, members) {
                let frame = Frame {
                    parent: Some(at),
                    step: Step::Key(key),
                };
                // Reporting mode (checked above): never cut.
                self.fail(&frame, ViolationKind::UndeclaredProperty);
            }
        }
        if undeclared_lossy && self.out.len() == mark {
            let scope = LosslessScope::Object;
            return self.fail(at, ViolationKind::NotLossless { scope });
        }
        true
    }
}

#[cfg(test)]
#[path = "direct_tests.rs"]
mod tests;
