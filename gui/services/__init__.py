"""The cockpit's long-lived services: things that exist because a server has users (watching runs,
deciding when a page needs new data). No Dash imports here; pages reach these through the app."""
