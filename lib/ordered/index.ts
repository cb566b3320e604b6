/** The ordered path (docs/ORDERED-DELIVERY.md): per-aggregate order, opt-in. Re-exports only. */
export * from './ordered-relay';
export * from './ordered-subscriber';
