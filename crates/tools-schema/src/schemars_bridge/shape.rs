//! What one node becomes: its vocabulary checked, nullable and type-array forms split
//! into `oneOf` branches, the type inferred; then the bottom-up build of the author spec.

use super::*;

impl<'a> Converter<'a> {
    /// Converts one node: its shape and its children, in order.
    pub(super) fn node(&mut self, id: usize, item: Work<'a>) -> (Shape<'a>, Vec<Work<'a>>) {
        let Work { mut view, path, .. } = item;
        self.expand(id, &mut view);
        // The vocabulary.
        let mut kept = Vec::with_capacity(view.len());
        for entry in view {
            let key = entry.key;
            if DROPPED.contains(&key) || key == "components" && entry.origin == 0 {
                continue;
            }
            if NOTES.contains(&key) || REST.contains(&key) || STRUCTURE.contains(&key) {
                kept.push(entry);
            } else {
                self.unsupported(id, entry.origin, key);
            }
        }
        let mut view = kept;
        self.nullable(id, &mut view);
        let params_root = self.params && id == 0;
        if let Some(i) = position(&view, "oneOf").or_else(|| position(&view, "anyOf")) {
            let entry = view.remove(i);
            if params_root {
                self.report(id, path, None, ViolationKind::NotObjectRooted);
            }
            return self.split(id, entry, view);
        }
        let mut broken = false;
        let ty = match position(&view, "type") {
            Some(i) => {
                let entry = view.remove(i);
                match type_list(&entry.value) {
                    Some(types) if types.len() == 1 => types.first().copied(),
                    Some(types) => match self.split_types(id, &entry, &types, view) {
                        Ok((ty, single)) => {
                            view = single;
                            Some(ty)
                        }
                        Err(done) => {
                            if params_root {
                                self.report(id, path, None, ViolationKind::NotObjectRooted);
                            }
                            return done;
                        }
                    },
                    None => {
                        self.report(id, entry.origin, Some("type"), ViolationKind::UnknownType);
                        broken = true;
                        None
                    }
                }
            }
            None => self.infer(id, &view),
        };
        if params_root && !broken && ty != Some(JsonType::Object) {
            self.report(id, path, None, ViolationKind::NotObjectRooted);
        }
        match ty {
            Some(ty) => self.typed(id, ty, view),
            None => {
                let mut notes = Vec::new();
                for entry in view {
                    if NOTES.contains(&entry.key) && entry.key != "format" {
                        notes.push(entry);
                    } else if !entry.soft && !broken {
                        self.report(
                            id,
                            entry.origin,
                            Some(entry.key),
                            ViolationKind::RequiresTypeOrOneOf,
                        );
                    }
                }
                (Shape::Json { notes }, Vec::new())
            }
        }
    }

    /// OpenAPI's `nullable`: `true` adds `null` to the node's types.
    pub(super) fn nullable(&mut self, id: usize, view: &mut Vec<Entry<'a>>) {
        let Some(i) = position(view, "nullable") else {
            return;
        };
        let entry = view.remove(i);
        match *entry.value {
            Value::Bool(false) => {}
            Value::Bool(true) => match view.iter_mut().find(|e| e.key == "type") {
                Some(ty) => {
                    if let Some(mut types) = type_list(&ty.value) {
                        if !types.contains(&JsonType::Null) {
                            types.push(JsonType::Null);
                        }
                        ty.value = Cow::Owned(type_value(&types));
                    }
                }
                // With an enum, OpenAPI wants `null` among its values; without type or
                // enum, the node admits null already, unless it is a combinator.
                None => {
                    if get(view, "oneOf").or_else(|| get(view, "anyOf")).is_some() {
                        self.unsupported(id, entry.origin, "nullable");
                    }
                }
            },
            _ => self.report(
                id,
                entry.origin,
                Some("nullable"),
                ViolationKind::AnnotationNotBoolean,
            ),
        }
    }

    /// A `oneOf`/`anyOf` of two or more branches, with the keywords beside it moved into
    /// every branch.
    pub(super) fn split(
        &mut self,
        id: usize,
        entry: Entry<'a>,
        view: Vec<Entry<'a>>,
    ) -> (Shape<'a>, Vec<Work<'a>>) {
        let mut notes = Vec::new();
        let mut extras = Vec::new();
        for e in view {
            if NOTES.contains(&e.key) && e.key != "format" {
                notes.push(e);
            } else {
                let ctx = self.new_ctx(e.ctx, 0, Some((e.origin, e.key)));
                extras.push(Entry {
                    soft: true,
                    ctx,
                    ..e
                });
            }
        }
        let Some(branches) = entry
            .borrowed()
            .and_then(Value::as_array)
            .filter(|b| b.len() >= 2)
        else {
            self.report(
                id,
                entry.origin,
                Some(entry.key),
                ViolationKind::OneOfMalformed,
            );
            return (Shape::Json { notes }, Vec::new());
        };
        let list = self.child(entry.origin, Step::Key(entry.key));
        let mut children = Vec::with_capacity(branches.len());
        for (k, branch) in branches.iter().enumerate() {
            let at = self.child(list, Step::Index(k));
            let mut view = self.view_of(branch, at, entry.ctx).unwrap_or_else(|| {
                self.report(id, at, None, ViolationKind::NotASchemaObject);
                Vec::new()
            });
            if !extras.is_empty() {
                self.merge(id, &mut view, extras.clone(), Cause::Beside);
            }
            children.push(Work {
                view,
                path: at,
                ctx: entry.ctx,
                parent: None,
            });
        }
        let any_of = (entry.key == "anyOf").then_some((entry.origin, entry.key));
        (Shape::OneOf { notes, any_of }, children)
    }

    /// A type array: one `oneOf` branch per type, each with the keywords that apply to it.
    /// `Ok` when a single type remains (with the node's view for it).
    pub(super) fn split_types(
        &mut self,
        id: usize,
        ty: &Entry<'a>,
        types: &[JsonType],
        view: Vec<Entry<'a>>,
    ) -> Result<(JsonType, Vec<Entry<'a>>), (Shape<'a>, Vec<Work<'a>>)> {
        let mut notes = Vec::new();
        let mut rest = Vec::new();
        for e in view {
            if NOTES.contains(&e.key) && e.key != "format" {
                notes.push(e);
            } else {
                rest.push(Entry { soft: true, ..e });
            }
        }
        let mut branches: Vec<(JsonType, Vec<Entry<'a>>)> = Vec::new();
        'types: for &t in types {
            let mut branch = Vec::with_capacity(rest.len());
            for e in &rest {
                if matches!(e.key, "enum" | "const") && !t.is_scalar() {
                    // The DSL has no enum of objects or arrays: refused when one of the
                    // values has the type, else the type admits none of them.
                    let values: Vec<&Value> = match &*e.value {
                        Value::Array(values) if e.key == "enum" => values.iter().collect(),
                        value => vec![value],
                    };
                    if values.iter().any(|v| fits(v, t)) {
                        self.report(
                            id,
                            e.origin,
                            Some(e.key),
                            ViolationKind::KeywordOnWrongType { ty: t },
                        );
                    }
                    continue 'types;
                }
                if e.key == "enum"
                    && let Some(values) = e.value.as_array()
                {
                    let kept: Vec<Value> = values
                        .iter()
                        .filter(|v| fits(v, t))
                        .map(tools_json::clone_deep)
                        .collect();
                    if kept.is_empty() {
                        continue 'types;
                    }
                    branch.push(Entry {
                        value: Cow::Owned(Value::Array(kept)),
                        ..e.clone()
                    });
                } else if e.key == "const" && !fits(&e.value, t) {
                    continue 'types;
                } else {
                    branch.push(e.clone());
                }
            }
            branches.push((t, branch));
        }
        match branches.len() {
            0 => {
                let at = get(&rest, "enum")
                    .or_else(|| get(&rest, "const"))
                    .unwrap_or(ty);
                let first = types.first().copied().unwrap_or(JsonType::Null);
                self.report(
                    id,
                    at.origin,
                    Some(at.key),
                    ViolationKind::EnumInvalid { ty: first },
                );
                Err((Shape::Json { notes }, Vec::new()))
            }
            1 => {
                let Some((t, branch)) = branches.pop() else {
                    return Err((Shape::Json { notes }, Vec::new()));
                };
                notes.extend(branch);
                Ok((t, notes))
            }
            _ => {
                let children = branches
                    .into_iter()
                    .map(|(t, mut view)| {
                        view.insert(
                            0,
                            Entry {
                                key: "type",
                                value: Cow::Owned(Value::String(t.as_str().into())),
                                soft: false,
                                ..ty.clone()
                            },
                        );
                        Work {
                            view,
                            path: ty.origin,
                            ctx: ty.ctx,
                            parent: None,
                        }
                    })
                    .collect();
                Err((
                    Shape::OneOf {
                        notes,
                        any_of: None,
                    },
                    children,
                ))
            }
        }
    }

    /// The type shared by the values of a type-less `enum`/`const`, if any.
    pub(super) fn infer(&mut self, id: usize, view: &[Entry<'a>]) -> Option<JsonType> {
        let mut types: Vec<JsonType> = Vec::new();
        let mut at = None;
        for e in view.iter().filter(|e| e.key == "enum" || e.key == "const") {
            at = Some((e.origin, e.key));
            let values: Vec<&Value> = match (e.key, &*e.value) {
                ("enum", Value::Array(values)) => values.iter().collect(),
                ("enum", _) => return None,
                (_, value) => vec![value],
            };
            for v in values {
                let t = type_of(v);
                if !types.contains(&t) {
                    types.push(t);
                }
            }
        }
        let (origin, key) = at?;
        if types.contains(&JsonType::Number) {
            types.retain(|t| *t != JsonType::Integer);
        }
        match types.as_slice() {
            [one] if one.is_scalar() => Some(*one),
            _ => {
                self.report(id, origin, Some(key), ViolationKind::RequiresTypeOrOneOf);
                None
            }
        }
    }

    /// A node of one type.
    pub(super) fn typed(
        &mut self,
        id: usize,
        ty: JsonType,
        view: Vec<Entry<'a>>,
    ) -> (Shape<'a>, Vec<Work<'a>>) {
        let params_root = self.params && id == 0;
        let mut notes = Vec::new();
        let mut rest = Vec::new();
        let mut children = Vec::new();
        let mut items = false;
        let mut object = None;
        let (mut properties, mut required, mut additional) = (None, None, None);
        for mut e in view {
            let key = e.key;
            if NOTES.contains(&key) && key != "format" {
                notes.push(e);
                continue;
            }
            if !applies(ty, key) {
                // A moved `enum`/`const` decides which values a branch admits: it cannot
                // be dropped.
                if !e.soft || matches!(key, "enum" | "const") {
                    self.report(
                        id,
                        e.origin,
                        Some(key),
                        ViolationKind::KeywordOnWrongType { ty },
                    );
                }
                continue;
            }
            match key {
                "format" => notes.push(e),
                "properties" => properties = Some(e),
                "required" => required = Some(e),
                "additionalProperties" => additional = Some(e),
                "items" => {
                    let Some(value) = e.borrowed() else { continue };
                    if is_true_schema(value) {
                        continue;
                    }
                    let at = self.child(e.origin, Step::Key("items"));
                    match self.view_of(value, at, e.ctx) {
                        Some(view) => {
                            items = true;
                            children.push(Work {
                                view,
                                path: at,
                                ctx: e.ctx,
                                parent: None,
                            });
                        }
                        None => self.report(id, at, None, ViolationKind::NotASchemaObject),
                    }
                }
                "minProperties" | "maxProperties" if params_root => self.report(
                    id,
                    e.origin,
                    Some(key),
                    ViolationKind::UnsupportedByDsl { key: key.into() },
                ),
                // `null` is the only value of its type: the enum or const says nothing more.
                "enum"
                    if ty == JsonType::Null
                        && e.value
                            .as_array()
                            .is_some_and(|v| v.iter().all(Value::is_null)) => {}
                "const" if ty == JsonType::Null && e.value.is_null() => {}
                "enum" if e.soft => {
                    if let Some(values) = e.value.as_array() {
                        let kept: Vec<Value> = values
                            .iter()
                            .filter(|v| fits(v, ty))
                            .map(tools_json::clone_deep)
                            .collect();
                        if kept.is_empty() {
                            self.report(id, e.origin, Some(key), ViolationKind::EnumInvalid { ty });
                            continue;
                        }
                        e.value = Cow::Owned(Value::Array(kept));
                    }
                    rest.push(e);
                }
                "const" if e.soft && !fits(&e.value, ty) => {
                    self.report(id, e.origin, Some(key), ViolationKind::ConstInvalid { ty });
                }
                _ => rest.push(e),
            }
        }
        if ty == JsonType::Object {
            let open = match additional {
                None => true,
                Some(e) => match &*e.value {
                    Value::Bool(b) => *b,
                    value if is_true_schema(value) => true,
                    _ => {
                        self.report(
                            id,
                            e.origin,
                            Some(e.key),
                            ViolationKind::AdditionalPropertiesNotBoolean,
                        );
                        true
                    }
                },
            };
            let mut names: Vec<(&'a str, bool)> = Vec::new();
            if let Some(e) = properties {
                match e.borrowed().and_then(Value::as_object) {
                    Some(map) => {
                        let list = self.child(e.origin, Step::Key("properties"));
                        for (name, value) in map {
                            let at = self.child(list, Step::Key(name));
                            let view = self.view_of(value, at, e.ctx).unwrap_or_else(|| {
                                self.report(id, at, None, ViolationKind::NotASchemaObject);
                                Vec::new()
                            });
                            names.push((name, false));
                            children.push(Work {
                                view,
                                path: at,
                                ctx: e.ctx,
                                parent: None,
                            });
                        }
                    }
                    None => self.report(
                        id,
                        e.origin,
                        Some(e.key),
                        ViolationKind::PropertiesNotObject,
                    ),
                }
            }
            if let Some(e) = required {
                match e
                    .value
                    .as_array()
                    .filter(|r| r.iter().all(Value::is_string))
                {
                    Some(list) => {
                        for name in list.iter().filter_map(Value::as_str) {
                            match names.iter_mut().find(|(n, _)| *n == name) {
                                Some((_, flag)) => *flag = true,
                                None => self.report(
                                    id,
                                    e.origin,
                                    Some(e.key),
                                    ViolationKind::RequiredUndeclared { name: name.into() },
                                ),
                            }
                        }
                    }
                    None => {
                        self.report(id, e.origin, Some(e.key), ViolationKind::RequiredMalformed)
                    }
                }
            }
            object = Some(ObjectShape { open, names });
        }
        let shape = Shape::Typed {
            ty,
            notes,
            rest,
            items,
            object,
        };
        (shape, children)
    }
}

/// Builds the author spec bottom-up (every child before its parent; no recursion).
pub(super) fn build(shapes: Vec<(Shape<'_>, Vec<usize>)>) -> Value {
    let mut built: Vec<Option<Value>> = Vec::new();
    built.resize_with(shapes.len(), || None);
    let take = |built: &mut Vec<Option<Value>>, id: usize| {
        built
            .get_mut(id)
            .and_then(Option::take)
            .unwrap_or(Value::Null)
    };
    for (id, (shape, children)) in shapes.into_iter().enumerate().rev() {
        let mut out = Map::new();
        match shape {
            Shape::Json { notes } => {
                out.insert("type".into(), Value::String("json".into()));
                insert_sorted(&mut out, notes, &NOTES);
            }
            Shape::OneOf { notes, .. } => {
                let branches = children.iter().map(|&c| take(&mut built, c)).collect();
                out.insert("oneOf".into(), Value::Array(branches));
                insert_sorted(&mut out, notes, &NOTES);
            }
            Shape::Typed {
                ty,
                notes,
                rest,
                items,
                object,
            } => {
                out.insert("type".into(), Value::String(ty.as_str().into()));
                insert_sorted(&mut out, notes, &NOTES);
                insert_sorted(&mut out, rest, &REST);
                if items && let Some(&c) = children.first() {
                    out.insert("items".into(), take(&mut built, c));
                }
                if let Some(object) = object {
                    out.insert("additionalProperties".into(), Value::Bool(object.open));
                    if !object.names.is_empty() {
                        let mut properties = Map::with_capacity(object.names.len());
                        for ((name, required), &c) in object.names.into_iter().zip(&children) {
                            let mut spec = take(&mut built, c);
                            if required && let Value::Object(map) = &mut spec {
                                map.insert("required".into(), Value::Bool(true));
                            }
                            properties.insert(name.into(), spec);
                        }
                        out.insert("properties".into(), Value::Object(properties));
                    }
                }
            }
        }
        if let Some(slot) = built.get_mut(id) {
            *slot = Some(Value::Object(out));
        }
    }
    take(&mut built, 0)
}

/// Inserts the entries in the order of `order` (each key once).
fn insert_sorted(out: &mut Map<String, Value>, mut entries: Vec<Entry<'_>>, order: &[&str]) {
    entries.sort_by_key(|e| {
        order
            .iter()
            .position(|k| *k == e.key)
            .unwrap_or(order.len())
    });
    for e in entries {
        let value = match e.value {
            Cow::Borrowed(value) => tools_json::clone_deep(value),
            Cow::Owned(value) => value,
        };
        out.insert(e.key.into(), value);
    }
}
