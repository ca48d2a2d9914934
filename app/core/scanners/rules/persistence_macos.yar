rule persistence_macos
{
    meta:
        id = "persistence-macos"
        description = "Survives reboots on macOS: LaunchAgents/LaunchDaemons plists loaded with launchctl, login items"
        severity = "high"
    strings:
        $agents = /Library\/LaunchAgents\/[\w.\-]+\.plist/ wide ascii
        $daemons = /Library\/LaunchDaemons\/[\w.\-]+\.plist/ wide ascii
        $launchctl = /launchctl\s+(load|bootstrap|submit)\b/ wide ascii
        $run_at_load = "<key>RunAtLoad</key>" wide ascii
        $login_item = /osascript\s+-e\s+['"][^\n]{0,160}make\s+(new\s+)?login\s+item/ nocase wide ascii
    condition:
        (($agents or $daemons) and ($launchctl or $run_at_load)) or $login_item
}
