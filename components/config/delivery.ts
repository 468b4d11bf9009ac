import { ErrorBudgetConfig, NOTIFICATIONS_TOKEN_KEY, NotificationsConfig, readErrorBudget, readNotifications } from "../rollouts/config";
import { SmokeTestConfig, readSmokeTest } from "../smoke/config";
import { ConfigReader, Plain } from "./reader";

/**
 * Delivery settings (ADR-056 D3, D6 and Phase 3): the error-budget freeze, notifications and the
 * per-cluster smoke canary.
 */

export interface DeliveryConfig {
    errorBudget: ErrorBudgetConfig;
    notifications: NotificationsConfig;
    smokeTest: SmokeTestConfig;
}

export function readDelivery(r: ConfigReader, raw: Plain, secretKeys: readonly string[]): DeliveryConfig | undefined {
    const errorBudget = readErrorBudget(r, raw.errorBudget);
    const notifications = readNotifications(r, raw.notifications, raw[NOTIFICATIONS_TOKEN_KEY], secretKeys.includes(NOTIFICATIONS_TOKEN_KEY));
    const smokeTest = readSmokeTest(r, raw.smokeTest);
    return errorBudget && notifications && smokeTest ? { errorBudget, notifications, smokeTest } : undefined;
}
