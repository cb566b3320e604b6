export * from './alarm-options';
export * from './relay-alarms';
export * from './subscriber-alarms';
export * from './flow-dashboard';
