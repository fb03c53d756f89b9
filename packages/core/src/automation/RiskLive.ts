import { RiskFirewall, RiskNotice } from "./RiskFirewall.js"
import { RiskRepo } from "./RiskRepo.js"
import { RiskSettings } from "./RiskSettings.js"

// The firewall and its repository are built with automation (`AutomationLive`), which every order passes.
export { RiskFirewall, RiskNotice, RiskRepo, RiskSettings }

/** Accounts' risk as their owners read and set it; needs the firewall, the accounts and the order placement. */
export const RiskLive = RiskSettings.Default
