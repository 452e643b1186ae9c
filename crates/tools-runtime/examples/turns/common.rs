//! What the two provider examples share: the demo tools and the runtime.

use serde::{Deserialize, Serialize};
use tools_runtime::prelude::*;
use tools_runtime::{ToolContext, ToolRuntime};

#[derive(Deserialize, ToolArgs)]
pub(crate) struct WeatherArgs {
    /// The city.
    pub(crate) city: String,
    /// The unit of the temperature (default celsius).
    pub(crate) unit: Option<Unit>,
}

#[derive(Clone, Copy, Deserialize, Serialize, ToolSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Serialize, Deserialize, ToolSchema)]
pub(crate) struct Weather {
    pub(crate) city: String,
    pub(crate) temperature: i64,
    pub(crate) unit: Unit,
}

#[derive(Deserialize, ToolArgs)]
pub(crate) struct ConvertArgs {
    /// The amount.
    pub(crate) amount: f64,
    /// From this currency.
    pub(crate) from: String,
    /// To this currency.
    pub(crate) to: String,
}

/// A runtime with `get_weather` (read-only, a recorded sample) and `convert`.
pub(crate) fn runtime() -> Result<ToolRuntime, Box<dyn std::error::Error>> {
    let runtime = ToolRuntime::new();
    let weather =
        define_tool::<WeatherArgs, Weather>("get_weather", "The current weather in a city.")
            .read_only()
            .body(|args: WeatherArgs, ctx| async move {
                let unit = args.unit.unwrap_or(Unit::Celsius);
                let celsius = if args.city == "Oslo" { -3 } else { 11 };
                let temperature = match unit {
                    Unit::Celsius => celsius,
                    Unit::Fahrenheit => celsius * 9 / 5 + 32,
                };
                ctx.defer_context(ToolContext::text(format!(
                    "Weather for {} is a recorded sample, not a live reading.",
                    args.city
                )));
                Ok(Weather {
                    city: args.city,
                    temperature,
                    unit,
                })
            })
            .build()?;
    runtime.register(weather)?.keep();
    let convert =
        define_tool::<ConvertArgs, f64>("convert", "Convert an amount between currencies.")
            .body(|args: ConvertArgs, _ctx| async move {
                // A recorded rate; a real tool asks a rates service.
                let rate = if (args.from.as_str(), args.to.as_str()) == ("EUR", "NOK") {
                    11.7
                } else {
                    1.0
                };
                Ok(args.amount * rate)
            })
            .build()?;
    runtime.register(convert)?.keep();
    Ok(runtime)
}
