// boot
