//! Depth safety: deep author specs compile on a 2 MiB thread stack in a debug build.

use serde_json::{Map, Value, json};
use tools_schema::Schema;

fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    let handle = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap();
    if let Err(panic) = handle.join() {
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn a_five_thousand_deep_one_of_chain_compiles() {
    on_small_stack(|| {
        // oneOf: [prev, null], built by hand (`json!` would clone the embedded value
        // recursively).
        let mut spec = json!({"type": "string"});
        for _ in 0..5_000 {
            let mut map = Map::new();
            map.insert(
                "oneOf".into(),
                Value::Array(vec![spec, json!({"type": "null"})]),
            );
            spec = Value::Object(map);
        }
        let schema = Schema::from_json(spec);
        let compiled = schema.compile().unwrap();
        // Walking branch 0 reaches the string after exactly 5 000 levels.
        let mut node = compiled.as_json();
        let mut levels = 0;
        while let Some(first) = node.get("oneOf").and_then(|b| b.get(0)) {
            node = first;
            levels += 1;
        }
        assert_eq!(levels, 5_000);
        assert_eq!(node, &json!({"type": "string"}));
        assert!(compiled.is_valid(&json!("leaf")));
        assert!(!compiled.is_valid(&json!(1)));
        // `null` matches the `null` branch of every level and, below an even number of
        // levels, the nested chain too: 5 000 levels make it match twice at the root.
        assert!(!compiled.is_valid(&json!(null)));
        // The builders drop and clone deep specs without recursion too.
        let copy = schema.clone();
        drop(schema);
        drop(copy);
    });
}

#[test]
fn deep_builder_nesting_compiles() {
    on_small_stack(|| {
        let mut schema: Schema = Schema::string().into();
        for _ in 0..2_000 {
            schema = Schema::array(schema).into();
        }
        let compiled = schema.compile().unwrap();
        let mut value = json!("x");
        for _ in 0..2_000 {
            value = Value::Array(vec![value]);
        }
        assert!(compiled.is_valid(&value));
        tools_json::drop_deep(value);
    });
}
