"""Agent tools: lookup_order, list_my_orders, issue_coupon, search_policy, escalate_to_staff."""
