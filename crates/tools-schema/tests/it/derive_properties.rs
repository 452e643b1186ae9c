//! Property tests of derived schemas: for several derived types (options, sequences, sets,
//! every enum representation, bounds, nested and flattened structs, `u8` / `i16` ranges),
//! (1) every value of the type serializes to JSON its compiled schema accepts, and (2)
//! every sample of the compiled schema (`testing::samples`, which probes the bounds)
//! deserializes into the type.

use std::collections::BTreeSet;

use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tools_json::JsonValue;
use tools_schema::testing::samples;
use tools_schema::{CompiledSchema, ToolArgs, ToolSchema};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolArgs)]
#[serde(rename_all = "camelCase")]
struct Order {
    /// Who ordered.
    #[tool(min_length = 1, max_length = 12)]
    customer_name: String,
    #[tool(range = 1..=99)]
    quantity: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[tool(range = -500..=500)]
    discount: Option<i16>,
    #[tool(min_items = 1, max_items = 4)]
    lines: Vec<Line>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    priority: Priority,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivery: Option<Delivery>,
    #[serde(default)]
    watchers: BTreeSet<Priority>,
    payment: Payment,
    #[serde(flatten)]
    meta: Meta,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
#[serde(deny_unknown_fields)]
struct Line {
    #[tool(min_length = 3, max_length = 8)]
    sku: String,
    count: u16,
    price_cents: Option<u32>,
    amount: Amount,
    #[tool(exclusive_minimum = 0.0, maximum = 1.0)]
    weight: f64,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToolSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
enum Priority {
    Low,
    Normal,
    RightNow,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
#[serde(tag = "method", rename_all = "kebab-case")]
enum Delivery {
    Pickup,
    Courier {
        #[tool(range = 1..=5)]
        attempts: u8,
    },
    ByPost(Address),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
struct Address {
    #[tool(min_length = 1, max_length = 10)]
    city: String,
    zip: [char; 5],
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
#[serde(untagged)]
enum Amount {
    Exact(i8),
    Range { low: i8, high: i8 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
enum Payment {
    Cash,
    Card {
        #[tool(min_items = 0, max_items = 2)]
        holders: Vec<String>,
    },
    Voucher(#[tool(min_length = 4)] String),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
#[serde(tag = "kind", content = "value")]
enum Tag {
    Flag,
    Count(u8),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, ToolSchema)]
struct Meta {
    #[tool(range = -3..3)]
    revision: i16,
    #[serde(skip_serializing_if = "Option::is_none")]
    tag: Option<Tag>,
}

fn text(min: usize, max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(any::<char>(), min..=max).prop_map(|c| c.into_iter().collect())
}

fn priority() -> impl Strategy<Value = Priority> {
    prop_oneof![
        Just(Priority::Low),
        Just(Priority::Normal),
        Just(Priority::RightNow)
    ]
}

fn amount() -> impl Strategy<Value = Amount> {
    prop_oneof![
        any::<i8>().prop_map(Amount::Exact),
        (any::<i8>(), any::<i8>()).prop_map(|(low, high)| Amount::Range { low, high }),
    ]
}

fn line() -> impl Strategy<Value = Line> {
    (
        text(3, 8),
        any::<u16>(),
        any::<Option<u32>>(),
        amount(),
        (1u32..=1000).prop_map(|n| f64::from(n) / 1000.0),
    )
        .prop_map(|(sku, count, price_cents, amount, weight)| Line {
            sku,
            count,
            price_cents,
            amount,
            weight,
        })
}

fn delivery() -> impl Strategy<Value = Delivery> {
    prop_oneof![
        Just(Delivery::Pickup),
        (1u8..=5).prop_map(|attempts| Delivery::Courier { attempts }),
        (text(1, 10), any::<[char; 5]>())
            .prop_map(|(city, zip)| Delivery::ByPost(Address { city, zip })),
    ]
}

fn payment() -> impl Strategy<Value = Payment> {
    prop_oneof![
        Just(Payment::Cash),
        prop::collection::vec(text(0, 4), 0..=2).prop_map(|holders| Payment::Card { holders }),
        text(4, 9).prop_map(Payment::Voucher),
    ]
}

fn meta() -> impl Strategy<Value = Meta> {
    let tag = prop_oneof![Just(Tag::Flag), any::<u8>().prop_map(Tag::Count)];
    (-3i16..3, prop::option::of(tag)).prop_map(|(revision, tag)| Meta { revision, tag })
}

fn order() -> impl Strategy<Value = Order> {
    (
        (
            text(1, 12),
            1u8..=99,
            prop::option::of(-500i16..=500),
            prop::collection::vec(line(), 1..=4),
            any::<Option<String>>(),
        ),
        (
            priority(),
            prop::option::of(delivery()),
            prop::collection::btree_set(priority(), 0..=3),
            payment(),
            meta(),
        ),
    )
        .prop_map(
            |(
                (customer_name, quantity, discount, lines, note),
                (priority, delivery, watchers, payment, meta),
            )| Order {
                customer_name,
                quantity,
                discount,
                lines,
                note,
                priority,
                delivery,
                watchers,
                payment,
                meta,
            },
        )
}

/// The violations of `value`'s JSON under `schema` (empty when accepted).
fn violations<T: Serialize>(schema: &CompiledSchema, value: &T) -> String {
    let json = serde_json::to_value(value).map_err(|e| e.to_string());
    match json.and_then(|j| JsonValue::new(j).map_err(|e| e.to_string())) {
        Ok(json) => schema.validate(&json, "value").to_string(),
        Err(e) => e,
    }
}

/// Every sample of `schema` deserializes into `T`; returns how many there were.
fn samples_fit<T: DeserializeOwned>(schema: &CompiledSchema) -> usize {
    let all = samples(schema.as_json()).unwrap();
    for sample in &all {
        let json = JsonValue::new(sample.clone()).unwrap();
        assert!(
            schema.is_valid(&json),
            "the sampler broke the schema: {sample}"
        );
        if let Err(e) = T::deserialize(json.as_value()) {
            panic!("{sample} matches the schema but not the type: {e}");
        }
    }
    all.len()
}

#[test]
fn every_sample_of_the_derived_schemas_deserializes() {
    let params = Order::tool_params().compile().unwrap();
    assert!(samples_fit::<Order>(&params) >= 12);
    let out_of_range = serde_json::json!({"quantity": 0, "discount": null});
    assert!(violations(&params, &out_of_range).contains("quantity"));
    let value = Order::tool_schema().compile().unwrap();
    assert!(samples_fit::<Order>(&value) >= 12);
    for (schema, name) in [
        (Line::tool_schema(), "Line"),
        (Delivery::tool_schema(), "Delivery"),
        (Payment::tool_schema(), "Payment"),
        (Meta::tool_schema(), "Meta"),
        (<Vec<Option<Amount>>>::tool_schema(), "Vec<Option<Amount>>"),
    ] {
        let compiled = schema.compile().unwrap();
        let count = match name {
            "Line" => samples_fit::<Line>(&compiled),
            "Delivery" => samples_fit::<Delivery>(&compiled),
            "Payment" => samples_fit::<Payment>(&compiled),
            "Meta" => samples_fit::<Meta>(&compiled),
            _ => samples_fit::<Vec<Option<Amount>>>(&compiled),
        };
        assert!(count > 0, "{name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_value_serializes_to_json_its_schemas_accept(order in order()) {
        let value = Order::tool_schema().compile().unwrap();
        prop_assert_eq!(violations(&value, &order), "");
        // At the parameter root an `Option` field must be absent rather than `null`: the
        // type skips `None` when serializing, so its JSON is valid arguments too.
        let params = Order::tool_params().compile().unwrap();
        prop_assert_eq!(violations(&params, &order), "");
        let back: Order = serde_json::from_value(serde_json::to_value(&order).unwrap()).unwrap();
        prop_assert_eq!(back, order);
    }

    #[test]
    fn nested_values_serialize_to_json_their_schemas_accept(
        lines in prop::collection::vec(line(), 0..4),
        amounts in prop::collection::vec(prop::option::of(amount()), 0..4),
        delivery in delivery(),
    ) {
        let schema = <Vec<Line>>::tool_schema().compile().unwrap();
        prop_assert_eq!(violations(&schema, &lines), "");
        let schema = <Vec<Option<Amount>>>::tool_schema().compile().unwrap();
        prop_assert_eq!(violations(&schema, &amounts), "");
        let schema = Delivery::tool_schema().compile().unwrap();
        prop_assert_eq!(violations(&schema, &delivery), "");
    }
}
