//! Validation of a value against a compiled schema.
//!
//! The walk is iterative (an explicit task stack) so no value or schema depth can overflow
//! the thread stack. `oneOf` branches are evaluated in *probe* mode: a failure there is only
//! counted, never materialized, and abandons the rest of its branch at once.

use serde_json::Value;
use smallvec::SmallVec;

use super::bounds::Bounds;
use super::compile::PropertyMap;
use super::walk::{Members, match_members, scalar_miss, undeclared_keys};
use super::{Node, NodeId};
use crate::lossless::{Step, materialize_path};
use crate::{JsonType, LosslessScope, Violation, ViolationKind, Violations, is_lossless};

enum Task<'a> {
    /// Validate `value` against node `node`. The value's path is `step` below the arena
    /// entry `parent`; it enters the arena only when needed (a container's children, or a
    /// violation), so valid scalars cost no path bookkeeping.
    Visit {
        node: NodeId,
        value: &'a Value,
        parent: u32,
        step: Step<'a>,
    },
    /// After an object's members: if nothing was reported since `mark` and an undeclared
    /// member was not lossless (`lossy`), the object is reported.
    ObjectTail { at: u32, mark: usize, lossy: bool },
    /// A key that a closed object does not declare.
    Undeclared { at: u32 },
    /// The next `oneOf` branch, or the verdict once every branch ran.
    OneOf {
        node: NodeId,
        value: &'a Value,
        parent: u32,
        step: Step<'a>,
        next: u32,
        matched: u32,
        /// Set when the branch run before `next` failed (a cut landed on this task).
        failed: bool,
        saved_floor: usize,
    },
}

struct Walk<'a> {
    nodes: &'a [Node],
    root: &'a str,
    stack: SmallVec<[Task<'a>; 64]>,
    arena: SmallVec<[(u32, Step<'a>); 64]>,
    out: Vec<Violation>,
    /// Nesting of `oneOf` branches being probed; failures inside are counted, not reported.
    probing: usize,
    /// Whether failures outside any `oneOf` are only recorded (for [`is_valid`]).
    quiet: bool,
    /// Set when a failure outside any `oneOf` happened in quiet mode.
    invalid: bool,
    /// Scratch: the member matching each declared property of the object being visited.
    present: SmallVec<[Option<&'a Value>; 32]>,
    /// Stack height to cut back to when a probe fails.
    floor: usize,
    /// Set by a failure in probe mode: the current branch is abandoned.
    cut: bool,
}

/// Validates and returns every violation.
pub(crate) fn validate(nodes: &[Node], value: &Value, root: &str) -> Violations {
    let mut walk = Walk::new(nodes, root, value);
    walk.run();
    walk.out.into()
}

/// Whether `value` is valid, stopping at the first failure.
pub(crate) fn is_valid(nodes: &[Node], value: &Value) -> bool {
    let mut walk = Walk::new(nodes, "", value);
    walk.quiet = true;
    walk.run();
    !walk.invalid
}

impl<'a> Walk<'a> {
    fn new(nodes: &'a [Node], root: &'a str, value: &'a Value) -> Walk<'a> {
        let mut arena = SmallVec::new();
        arena.push((0, Step::Root));
        let mut stack = SmallVec::new();
        stack.push(Task::Visit {
            node: 0,
            value,
            parent: 0,
            step: Step::Root,
        });
        Walk {
            nodes,
            root,
            stack,
            arena,
            out: Vec::new(),
            probing: 0,
            quiet: false,
            invalid: false,
            present: SmallVec::new(),
            floor: 0,
            cut: false,
        }
    }

    fn child(&mut self, parent: u32, step: Step<'a>) -> u32 {
        let id = u32::try_from(self.arena.len()).unwrap_or(u32::MAX);
        self.arena.push((parent, step));
        id
    }

    /// Whether failures are being materialized as violations.
    fn reporting(&self) -> bool {
        self.probing == 0 && !self.quiet
    }

    fn fail(&mut self, at: u32, kind: ViolationKind) {
        if self.reporting() {
            let path = materialize_path(&self.arena, at, self.root);
            self.out.push(Violation::new(path, kind));
        } else {
            self.fail_quietly();
        }
    }

    /// Counts a failure without building it, and abandons the current probe (or, in quiet
    /// mode outside any `oneOf`, the whole walk: `floor` is 0 there).
    fn fail_quietly(&mut self) {
        if self.probing == 0 {
            self.invalid = true;
        }
        self.cut = true;
    }

    /// Like [`Walk::fail`], for a failure whose kind is costly to build (it is only built
    /// when reported).
    fn fail_with(&mut self, parent: u32, step: Step<'a>, kind: impl FnOnce() -> ViolationKind) {
        if self.reporting() {
            self.fail_at(parent, step, kind());
        } else {
            self.fail_quietly();
        }
    }

    fn run(&mut self) {
        while let Some(task) = self.stack.pop() {
            match task {
                Task::Visit {
                    node,
                    value,
                    parent,
                    step,
                } => self.visit(node, value, parent, step),
                Task::Undeclared { at } => self.fail(at, ViolationKind::UndeclaredProperty),
                Task::ObjectTail { at, mark, lossy } => self.object_tail(at, mark, lossy),
                Task::OneOf {
                    node,
                    value,
                    parent,
                    step,
                    next,
                    mut matched,
                    failed,
                    saved_floor,
                } => {
                    if next > 0 && !failed {
                        matched += 1;
                    }
                    let branches = match self.nodes.get(node as usize) {
                        Some(Node::OneOf(branches)) => &branches[..],
                        _ => &[],
                    };
                    if let Some(&branch) = branches.get(next as usize) {
                        self.stack.push(Task::OneOf {
                            node,
                            value,
                            parent,
                            step,
                            next: next + 1,
                            matched,
                            failed: false,
                            saved_floor,
                        });
                        self.floor = self.stack.len();
                        self.stack.push(Task::Visit {
                            node: branch,
                            value,
                            parent,
                            step,
                        });
                    } else {
                        self.floor = saved_floor;
                        self.probing -= 1;
                        if matched != 1 {
                            let matched = matched as usize;
                            self.fail_at(parent, step, ViolationKind::OneOfMismatch { matched });
                        }
                    }
                }
            }
            if self.cut {
                self.cut = false;
                self.stack.truncate(self.floor);
                if let Some(Task::OneOf { failed, .. }) = self.stack.last_mut() {
                    *failed = true;
                }
            }
        }
    }

    /// Fails at the path `step` below `parent`, entering it in the arena first.
    fn fail_at(&mut self, parent: u32, step: Step<'a>, kind: ViolationKind) {
        if self.reporting() {
            let at = self.child(parent, step);
            self.fail(at, kind);
        } else {
            self.fail_quietly();
        }
    }

    fn visit(&mut self, node: NodeId, value: &'a Value, parent: u32, step: Step<'a>) {
        let Some(schema) = self.nodes.get(node as usize) else {
            return;
        };
        match schema {
            Node::Any { bounds } => {
                if !is_lossless(value) {
                    self.fail_at(
                        parent,
                        step,
                        ViolationKind::NotLossless {
                            scope: LosslessScope::Value,
                        },
                    );
                } else if let Some(bounds) = bounds {
                    self.bounds(bounds, value, parent, step);
                }
            }
            Node::OneOf(_) => {
                self.probing += 1;
                self.stack.push(Task::OneOf {
                    node,
                    value,
                    parent,
                    step,
                    next: 0,
                    matched: 0,
                    failed: false,
                    saved_floor: self.floor,
                });
            }
            Node::Scalar {
                ty,
                allowed,
                constant,
                bounds,
                ..
            } => {
                let (allowed, constant) = (allowed.as_ref(), constant.as_ref());
                match scalar_miss(*ty, allowed, constant, value) {
                    Some(miss) => {
                        self.fail_with(parent, step, || miss.kind());
                    }
                    None => {
                        if let Some(bounds) = bounds {
                            self.bounds(bounds, value, parent, step);
                        }
                    }
                }
            }
            Node::Array { items, bounds } => {
                let Value::Array(elements) = value else {
                    self.fail_at(
                        parent,
                        step,
                        ViolationKind::ExpectedType {
                            expected: JsonType::Array,
                        },
                    );
                    return;
                };
                if let Some(bounds) = bounds {
                    self.bounds(bounds, value, parent, step);
                    if self.cut {
                        return;
                    }
                }
                match items {
                    Some(items) => {
                        let at = self.child(parent, step);
                        for (index, element) in elements.iter().enumerate().rev() {
                            self.stack.push(Task::Visit {
                                node: *items,
                                value: element,
                                parent: at,
                                step: Step::Index(index),
                            });
                        }
                    }
                    None => {
                        if !elements.iter().all(is_lossless) {
                            self.fail_at(
                                parent,
                                step,
                                ViolationKind::NotLossless {
                                    scope: LosslessScope::Array,
                                },
                            );
                        }
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
                    self.fail_at(
                        parent,
                        step,
                        ViolationKind::ExpectedType {
                            expected: JsonType::Object,
                        },
                    );
                    return;
                };
                let at = self.child(parent, step);
                if let Some(bounds) = bounds {
                    bounds.check(value, |kind| {
                        self.fail(at, kind);
                        !self.cut
                    });
                    if self.cut {
                        return;
                    }
                }
                self.object(properties, required, *closed, members, at);
            }
        }
    }

    /// Validates an object in one pass over its members (one hashed lookup each):
    /// (a) missing required properties, (b) declared properties in declaration order,
    /// (c) undeclared keys of a closed object in value order, (d) the lossless check of the
    /// undeclared members when (a)–(c) found nothing.
    fn object(
        &mut self,
        properties: &'a PropertyMap,
        required: &'a [u32],
        closed: bool,
        members: &'a serde_json::Map<String, Value>,
        at: u32,
    ) {
        let mut present = std::mem::take(&mut self.present);
        present.clear();
        present.resize(properties.len(), None);
        let Members {
            undeclared,
            undeclared_lossy,
        } = match_members(properties, closed, members, &mut present);
        for &index in required {
            if present.get(index as usize).is_some_and(Option::is_none) {
                let Some((name, _)) = properties.get_index(index as usize) else {
                    continue;
                };
                let id = self.child(at, Step::Key(name));
                self.fail(id, ViolationKind::MissingRequired);
                if self.cut {
                    self.present = present;
                    return;
                }
            }
        }
        if undeclared && !self.reporting() {
            self.fail_quietly();
            self.present = present;
            return;
        }
        // Tasks run last-pushed first: the tail, then the undeclared keys, then the children.
        self.stack.push(Task::ObjectTail {
            at,
            mark: self.out.len(),
            lossy: undeclared_lossy,
        });
        if undeclared {
            for key in undeclared_keys(properties, members).rev() {
                let id = self.child(at, Step::Key(key));
                self.stack.push(Task::Undeclared { at: id });
            }
        }
        for (index, member) in present.iter().enumerate().rev() {
            let (Some(member), Some((name, &child))) = (member, properties.get_index(index)) else {
                continue;
            };
            self.stack.push(Task::Visit {
                node: child,
                value: member,
                parent: at,
                step: Step::Key(name),
            });
        }
        self.present = present;
    }

    /// Reports every bound `value` breaks at the path `step` below `parent` (stopping at
    /// the first in probe and quiet modes).
    fn bounds(&mut self, bounds: &'a Bounds, value: &'a Value, parent: u32, step: Step<'a>) {
        let mut at = None;
        bounds.check(value, |kind| {
            if self.reporting() {
                let id = *at.get_or_insert_with(|| self.child(parent, step));
                self.fail(id, kind);
            } else {
                self.fail_quietly();
            }
            !self.cut
        });
    }

    fn object_tail(&mut self, at: u32, mark: usize, lossy: bool) {
        // Only reported violations are counted: in probe mode any failure below cuts the
        // tail away, so a tail that runs there has nothing below it failed.
        if lossy && self.out.len() == mark {
            self.fail(
                at,
                ViolationKind::NotLossless {
                    scope: LosslessScope::Object,
                },
            );
        }
    }
}
