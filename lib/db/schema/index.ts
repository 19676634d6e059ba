export * from "./people";
export * from "./teams";
export * from "./activities";
export * from "./tokens";
export * from "./oauth";
export * from "./events";
export * from "./platform";
export * from "./webhooks";
