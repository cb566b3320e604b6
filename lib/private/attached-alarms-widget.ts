import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';

/** Whether `alarm` is still in the construct tree (an escape hatch may have removed it with `node.tryRemoveChild`). */
function isAttached(alarm: cloudwatch.IAlarm): boolean {
  return alarm.node.scope?.node.tryFindChild(alarm.node.id) === alarm;
}

/**
 * An alarm status widget of the alarms still in the construct tree when the dashboard is rendered (at synth), so a
 * dashboard never names an alarm that was removed after it was added (CloudFormation would refuse the reference).
 * With none left, a text widget says so.
 */
export class AttachedAlarmsWidget implements cloudwatch.IWidget {
  public readonly width: number;
  public readonly height: number;
  private x = 0;
  private y = 0;

  public constructor(
    private readonly title: string,
    private readonly alarms: readonly cloudwatch.IAlarm[],
    size: { readonly width: number; readonly height: number },
    /** The ARN the dashboard shows for an alarm (e.g. built from a literal name, to refer to no other stack). */
    private readonly arnOf: (alarm: cloudwatch.IAlarm) => string = (alarm) => alarm.alarmArn,
  ) {
    this.width = size.width;
    this.height = size.height;
  }

  public position(x: number, y: number): void {
    this.x = x;
    this.y = y;
  }

  public toJson(): any[] {
    const attached = this.alarms.filter(isAttached);
    const widget: cloudwatch.IWidget =
      attached.length === 0
        ? new cloudwatch.TextWidget({ markdown: `**${this.title}**: none`, width: this.width, height: this.height })
        : new cloudwatch.AlarmStatusWidget({ title: this.title, alarms: attached, width: this.width, height: this.height });
    widget.position(this.x, this.y);
    const json = widget.toJson();
    // AlarmStatusWidget lists `alarm.alarmArn` in order; the ARNs this dashboard may refer to replace them.
    for (const entry of json) {
      if (Array.isArray(entry?.properties?.alarms)) entry.properties.alarms = attached.map(this.arnOf);
    }
    return json;
  }
}
