rule persistence_windows
{
    meta:
        id = "persistence-windows"
        description = "Survives reboots on Windows: Run keys, scheduled tasks, Startup folder, WMI event consumers"
        severity = "high"
    strings:
        $run_key = /\\CurrentVersion\\{1,2}Run(Once)?\b/ nocase wide ascii
        $schtasks = /schtasks(\.exe)?\s+\/create\b/ nocase wide ascii
        $startup = /\\Start Menu\\{1,2}Programs\\{1,2}Startup/ nocase wide ascii
        $wmi_filter = "__EventFilter" wide ascii
        $wmi_consumer = "CommandLineEventConsumer" wide ascii
        $register_task = /Register-ScheduledTask\b/ nocase wide ascii
    condition:
        any of them
}
