//! An author spec held behind an `Arc`, so that a compiled schema can keep it (to render
//! its JSON on first use) without a copy.

use std::sync::{Arc, OnceLock};

use serde_json::Value;

/// A shared author spec. Copy on write: changing a spec that a compiled schema (or a clone)
/// also holds changes a private copy. The last holder drops the tree iteratively, so a
/// spec of any depth is safe to drop.
pub(crate) struct Spec(Option<Arc<Value>>);

impl Spec {
    pub(crate) fn new(value: Value) -> Spec {
        Spec(Some(Arc::new(value)))
    }

    /// The spec.
    pub(crate) fn get(&self) -> &Value {
        static NULL: OnceLock<Value> = OnceLock::new();
        match &self.0 {
            Some(spec) => spec,
            None => NULL.get_or_init(|| Value::Null),
        }
    }

    /// The spec, to change: a private copy if anything else holds it.
    pub(crate) fn get_mut(&mut self) -> &mut Value {
        let spec = self.0.get_or_insert_with(|| Arc::new(Value::Null));
        if Arc::get_mut(spec).is_none() {
            *spec = Arc::new(tools_json::clone_deep(spec));
        }
        // The copy just made is unshared; should that ever not hold, a fresh value is
        // handed out rather than a shared one changed.
        Arc::make_mut(spec)
    }

    /// The spec by value (a copy if anything else holds it), leaving `null`.
    pub(crate) fn take(&mut self) -> Value {
        match self.0.take() {
            None => Value::Null,
            Some(spec) => {
                Arc::try_unwrap(spec).unwrap_or_else(|shared| tools_json::clone_deep(&shared))
            }
        }
    }

    /// Another handle on the same spec (no copy).
    pub(crate) fn share(&self) -> Spec {
        Spec(self.0.clone())
    }
}

impl Clone for Spec {
    fn clone(&self) -> Spec {
        self.share()
    }
}

impl PartialEq for Spec {
    fn eq(&self, other: &Spec) -> bool {
        tools_json::eq_deep(self.get(), other.get())
    }
}

impl Drop for Spec {
    fn drop(&mut self) {
        // Only the last holder gets the tree back (`into_inner` hands it to exactly one).
        if let Some(spec) = self.0.take().and_then(Arc::into_inner) {
            tools_json::drop_deep(spec);
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::Spec;

    #[test]
    fn a_change_after_sharing_leaves_the_other_holder_as_it_was() {
        let mut a = Spec::new(json!({"type": "string"}));
        let b = a.share();
        if let Some(map) = a.get_mut().as_object_mut() {
            map.insert("title".into(), json!("t"));
        }
        assert_eq!(a.get(), &json!({"type": "string", "title": "t"}));
        assert_eq!(b.get(), &json!({"type": "string"}));
    }

    #[test]
    fn taking_a_shared_spec_copies_it_and_taking_an_unshared_one_does_not() {
        let mut a = Spec::new(json!([1, 2]));
        let b = a.share();
        assert_eq!(a.take(), json!([1, 2]));
        assert_eq!(a.get(), &json!(null));
        assert_eq!(b.get(), &json!([1, 2]));
    }

    #[test]
    fn a_deep_spec_drops_without_recursion_from_any_holder() {
        let mut deep = json!(null);
        for _ in 0..200_000 {
            deep = serde_json::Value::Array(vec![deep]);
        }
        let a = Spec::new(deep);
        let b = a.share();
        drop(a);
        drop(b);
    }
}
