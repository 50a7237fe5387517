fn main() {
    println!("syncguard");
}
