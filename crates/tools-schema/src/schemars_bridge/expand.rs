//! The driver of the conversion: `$ref` resolution with the cycle check, merging of
//! `allOf` and `$ref` siblings, and the disjointness proof of rewritten `anyOf`s.

use super::*;

impl<'a> Converter<'a> {
    pub(super) fn new(root: &'a Value, params: bool) -> Converter<'a> {
        Converter {
            root,
            params,
            steps: vec![(0, Step::Root)],
            ctxs: vec![Ctx {
                parent: 0,
                target: std::ptr::from_ref(root) as usize,
                via: None,
            }],
            found: Vec::new(),
            poisoned: Vec::new(),
            copied: 0,
        }
    }

    pub(super) fn child(&mut self, parent: usize, step: Step<'a>) -> usize {
        self.steps.push((parent, step));
        self.steps.len() - 1
    }

    pub(super) fn path(&self, mut at: usize, key: Option<&str>) -> Path {
        let mut segments = Vec::new();
        if let Some(key) = key {
            segments.push(Segment::Key(key.into()));
        }
        while let Some(&(parent, step)) = self.steps.get(at) {
            match step {
                Step::Root => break,
                Step::Key(k) => segments.push(Segment::Key(k.into())),
                Step::Index(i) => segments.push(Segment::Index(i)),
            }
            at = parent;
        }
        segments.reverse();
        Path::from_parts("schema", segments)
    }

    pub(super) fn report(
        &mut self,
        node: usize,
        at: usize,
        key: Option<&str>,
        kind: ViolationKind,
    ) {
        let path = self.path(at, key);
        self.found.push((node, Violation::new(path, kind)));
    }

    pub(super) fn unsupported(&mut self, node: usize, at: usize, key: &str) {
        self.report(
            node,
            at,
            Some(key),
            ViolationKind::UnsupportedKeyword {
                keyword: key.into(),
            },
        );
    }

    /// The keywords of a subschema, or `None` when it is neither an object nor `true`.
    pub(super) fn view_of(
        &self,
        value: &'a Value,
        path: usize,
        ctx: usize,
    ) -> Option<Vec<Entry<'a>>> {
        match value {
            Value::Object(map) => Some(
                map.iter()
                    .map(|(key, value)| Entry {
                        key,
                        value: Cow::Borrowed(value),
                        origin: path,
                        ctx,
                        soft: false,
                    })
                    .collect(),
            ),
            Value::Bool(true) => Some(Vec::new()),
            _ => None,
        }
    }

    /// The target of a `$ref` in this document and its path id.
    pub(super) fn resolve(&mut self, reference: &str) -> Option<(&'a Value, usize)> {
        let fragment = reference.strip_prefix('#')?;
        let mut node = self.root;
        let mut at = 0;
        if fragment.is_empty() {
            return Some((node, at));
        }
        let rest = fragment.strip_prefix('/')?;
        for token in rest.split('/') {
            let token = pointer_token(token)?;
            match node {
                Value::Object(map) => {
                    let (key, value) = map.get_key_value(&token)?;
                    at = self.child(at, Step::Key(key));
                    node = value;
                }
                Value::Array(items) => {
                    let index: usize = token.parse().ok()?;
                    node = items.get(index)?;
                    at = self.child(at, Step::Index(index));
                }
                _ => return None,
            }
        }
        Some((node, at))
    }

    pub(super) fn in_chain(&self, mut ctx: usize, target: usize) -> bool {
        while let Some(c) = self.ctxs.get(ctx) {
            if c.target == target {
                return true;
            }
            if ctx == 0 {
                break;
            }
            ctx = c.parent;
        }
        false
    }

    pub(super) fn new_ctx(
        &mut self,
        parent: usize,
        target: usize,
        via: Option<(usize, &'a str)>,
    ) -> usize {
        self.ctxs.push(Ctx {
            parent,
            target,
            via,
        });
        self.ctxs.len() - 1
    }

    /// The copy that made a context, if any.
    pub(super) fn via(&self, mut ctx: usize) -> Option<(usize, &'a str)> {
        while let Some(c) = self.ctxs.get(ctx) {
            if c.via.is_some() {
                return c.via;
            }
            if ctx == 0 {
                break;
            }
            ctx = c.parent;
        }
        None
    }

    /// Merges `incoming` into `view` (both must hold); annotations already in `view` win.
    pub(super) fn merge(
        &mut self,
        node: usize,
        view: &mut Vec<Entry<'a>>,
        incoming: Vec<Entry<'a>>,
        cause: Cause<'a>,
    ) {
        let equal = |a: Option<&Entry<'_>>, b: Option<&Entry<'_>>| match (a, b) {
            (Some(a), Some(b)) => tools_json::eq_deep(&a.value, &b.value),
            (None, None) => true,
            _ => false,
        };
        let closed = |v: &[Entry<'_>]| {
            get(v, "additionalProperties").is_some_and(|e| !is_true_schema(&e.value))
        };
        let (vp, ip) = (get(view, "properties"), get(&incoming, "properties"));
        // Closing an object over properties declared on the other side changes its meaning.
        let clash =
            (vp.is_some() && closed(&incoming) || ip.is_some() && closed(view)) && !equal(vp, ip);
        let mut conflicts: Vec<(usize, &'a str)> = Vec::new();
        if clash && let Some(e) = get(&incoming, "additionalProperties").or(ip) {
            conflicts.push((e.origin, e.key));
        }
        for entry in incoming {
            let Some(existing) = view.iter_mut().find(|e| e.key == entry.key) else {
                view.push(entry);
                continue;
            };
            let key = entry.key;
            if NOTES.contains(&key) || DROPPED.contains(&key) {
                continue;
            }
            let merged = match key {
                "required" => match (existing.value.as_array(), entry.value.as_array()) {
                    (Some(a), Some(b)) if a.iter().chain(b).all(Value::is_string) => {
                        let mut names = a.clone();
                        for name in b {
                            if !names.contains(name) {
                                names.push(name.clone());
                            }
                        }
                        Some(Value::Array(names))
                    }
                    _ => None,
                },
                "type" => match (type_list(&existing.value), type_list(&entry.value)) {
                    (Some(a), Some(b)) => {
                        let both = intersect(&a, &b);
                        (!both.is_empty()).then(|| type_value(&both))
                    }
                    _ => None,
                },
                _ if tools_json::eq_deep(&existing.value, &entry.value) => {
                    existing.soft &= entry.soft;
                    continue;
                }
                _ => None,
            };
            match merged {
                Some(value) => {
                    existing.value = Cow::Owned(value);
                    existing.soft &= entry.soft;
                }
                None => conflicts.push((entry.origin, key)),
            }
        }
        for (origin, key) in conflicts {
            match cause {
                Cause::Keyword(at, keyword) => self.unsupported(node, at, keyword),
                Cause::Beside => self.report(node, origin, Some(key), ViolationKind::BesideOneOf),
            }
        }
    }

    /// Inlines `$ref`s and merges `allOf` and one-branch `anyOf`/`oneOf` into the view.
    pub(super) fn expand(&mut self, node: usize, view: &mut Vec<Entry<'a>>) {
        let mut pending: Vec<(Vec<Entry<'a>>, Cause<'a>)> = Vec::new();
        loop {
            if let Some(i) = position(view, "$ref") {
                let entry = view.remove(i);
                let target = entry
                    .value
                    .as_str()
                    .map(str::to_owned)
                    .and_then(|r| self.resolve(&r));
                let Some((target, at)) = target else {
                    self.unsupported(node, entry.origin, "$ref");
                    continue;
                };
                let address = std::ptr::from_ref(target) as usize;
                if self.in_chain(entry.ctx, address) {
                    // A cycle: the type is recursive and has no finite inlined form.
                    self.unsupported(node, entry.origin, "$ref");
                    continue;
                }
                let ctx = self.new_ctx(entry.ctx, address, Some((entry.origin, "$ref")));
                match self.view_of(target, at, ctx) {
                    Some(incoming) => {
                        self.merge(node, view, incoming, Cause::Keyword(entry.origin, "$ref"))
                    }
                    None => self.report(node, at, None, ViolationKind::NotASchemaObject),
                }
                continue;
            }
            let combinator = ["allOf", "anyOf", "oneOf"].into_iter().find_map(|key| {
                let i = position(view, key)?;
                let len = view[i].value.as_array().map(Vec::len);
                (key == "allOf" || len == Some(1)).then_some(i)
            });
            if let Some(i) = combinator {
                let entry = view.remove(i);
                let branches = entry.borrowed().and_then(Value::as_array);
                let Some(branches) = branches.filter(|b| !b.is_empty()) else {
                    self.unsupported(node, entry.origin, entry.key);
                    continue;
                };
                let list = self.child(entry.origin, Step::Key(entry.key));
                for (k, branch) in branches.iter().enumerate().rev() {
                    let at = self.child(list, Step::Index(k));
                    match self.view_of(branch, at, entry.ctx) {
                        Some(v) => pending.push((v, Cause::Keyword(entry.origin, entry.key))),
                        None => self.report(node, at, None, ViolationKind::NotASchemaObject),
                    }
                }
                continue;
            }
            match pending.pop() {
                Some((incoming, cause)) => self.merge(node, view, incoming, cause),
                None => break,
            }
        }
    }

    pub(super) fn run(mut self) -> Result<Value, Violations> {
        let mut shapes: Vec<(Shape<'a>, Vec<usize>)> = Vec::new();
        let mut work: Vec<Work<'a>> = Vec::new();
        match self.view_of(self.root, 0, 0) {
            Some(view) => work.push(Work {
                view,
                path: 0,
                ctx: 0,
                parent: None,
            }),
            None => self.report(0, 0, None, ViolationKind::NotASchemaObject),
        }
        while let Some(item) = work.pop() {
            let id = shapes.len();
            if let Some((parent, slot)) = item.parent
                && let Some(child) = shapes.get_mut(parent).and_then(|(_, c)| c.get_mut(slot))
            {
                *child = id;
            }
            if let Some((at, key)) = self.via(item.ctx) {
                self.copied += 1;
                if self.copied > MAX_COPIED_NODES {
                    if key == "$ref" {
                        self.unsupported(id, at, key);
                    } else {
                        self.report(id, at, Some(key), ViolationKind::BesideOneOf);
                    }
                    return Err(self.violations());
                }
            }
            let before = self.found.len();
            let (shape, children) = self.node(id, item);
            // A node replaced by `json` after a refusal matches nothing for the `anyOf`
            // check, so that the refusal is not reported twice.
            if matches!(shape, Shape::Json { .. }) && self.found.len() > before {
                self.poisoned.push(id);
            }
            let start = work.len();
            for (slot, mut child) in children.into_iter().enumerate() {
                child.parent = Some((id, slot));
                work.push(child);
            }
            let count = work.len() - start;
            work[start..].reverse();
            shapes.push((shape, vec![0; count]));
        }
        self.check_any_of(&shapes);
        if !self.found.is_empty() {
            return Err(self.violations());
        }
        Ok(super::shape::build(shapes))
    }

    /// The violations in walk order, each once.
    pub(super) fn violations(&mut self) -> Violations {
        let mut found = std::mem::take(&mut self.found);
        found.sort_by_key(|(node, _)| *node);
        let mut seen = HashSet::new();
        found
            .into_iter()
            .filter(|(_, v)| seen.insert(format!("{}\u{0}{:?}", v.path, v.kind)))
            .map(|(_, v)| v)
            .collect::<Vec<_>>()
            .into()
    }

    /// Reports every `anyOf` whose branches can match one value.
    pub(super) fn check_any_of(&mut self, shapes: &[(Shape<'a>, Vec<usize>)]) {
        let mut masks = vec![ANY; shapes.len()];
        for (id, (shape, children)) in shapes.iter().enumerate().rev() {
            let own = match shape {
                Shape::Json { .. } if self.poisoned.binary_search(&id).is_ok() => 0,
                Shape::Json { .. } => ANY,
                Shape::Typed { ty, .. } => mask(*ty),
                Shape::OneOf { any_of, .. } => {
                    let mut union = 0u8;
                    let mut overlap = false;
                    for &c in children {
                        let m = masks.get(c).copied().unwrap_or(ANY);
                        overlap |= union & m != 0;
                        union |= m;
                    }
                    if overlap && let Some((at, key)) = any_of {
                        self.unsupported(id, *at, key);
                    }
                    union
                }
            };
            if let Some(slot) = masks.get_mut(id) {
                *slot = own;
            }
        }
    }
}
